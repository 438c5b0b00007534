#include "support/ClusterFixture.h"

#include "gate/HashSlot.h"

#include <QDeadlineTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QThread>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// One running node's CLUSTER SLOTS as (first, last, master port) rows, sorted; empty if it
/// does not answer.
QList<std::tuple<qint64, qint64, qint64>> slotTable(RedisFixture &node)
{
    QList<std::tuple<qint64, qint64, qint64>> rows;
    auto table = node.command({"CLUSTER", "SLOTS"});
    if (!table || table->type != RedisValue::Type::Array)
        return rows;
    for (const RedisValue &range : table->elements)
        if (range.elements.size() >= 3)
            rows.append({range.elements[0].integer, range.elements[1].integer,
                         range.elements[2].elements.value(1).integer});
    std::sort(rows.begin(), rows.end());
    return rows;
}

} // namespace

ClusterFixture::ClusterFixture(int masters, int replicasPerMaster, int nodeTimeoutMs)
    : m_masters(masters)
    , m_replicas(replicasPerMaster)
    , m_nodeTimeoutMs(nodeTimeoutMs)
{
}

ClusterFixture::~ClusterFixture() = default; // each RedisFixture stops its server

bool ClusterFixture::installed()
{
    return RedisFixture::serverInstalled() && !QStandardPaths::findExecutable(u"redis-cli"_s).isEmpty();
}

bool ClusterFixture::start()
{
    QStringList endpoints;
    const int count = m_masters * (1 + m_replicas);
    for (int i = 0; i < count; ++i) {
        auto node = std::make_unique<RedisFixture>(
            QStringList{u"--cluster-enabled"_s, u"yes"_s, u"--cluster-config-file"_s, u"nodes.conf"_s,
                        u"--cluster-node-timeout"_s, QString::number(m_nodeTimeoutMs),
                        u"--cluster-require-full-coverage"_s, u"no"_s,
                        // A master starts a replica's sync at once instead of waiting 5 s for more.
                        u"--repl-diskless-sync-delay"_s, u"0"_s},
            /*clusterPort=*/true);
        if (!node->start()) {
            m_error = node->errorString();
            return false;
        }
        endpoints << u"127.0.0.1:%1"_s.arg(node->port());
        m_nodes.push_back(std::move(node));
    }
    QProcess create;
    create.setProcessChannelMode(QProcess::MergedChannels);
    create.start(u"redis-cli"_s, QStringList{u"--cluster"_s, u"create"_s} + endpoints
                                     + QStringList{u"--cluster-replicas"_s, QString::number(m_replicas),
                                                   u"--cluster-yes"_s});
    if (!create.waitForFinished(60000) || create.exitCode() != 0) {
        m_error = u"redis-cli --cluster create failed: %1"_s.arg(QString::fromLocal8Bit(create.readAll()));
        return false;
    }
    if (!waitUntilStable(30000)) {
        m_error = u"the cluster did not become ok with every node agreeing on the slots"_s;
        return false;
    }
    // Every node knows every other one, in its role (gossip spreads the replicas' roles a
    // little after the slots): CLUSTER NODES of each lists all of them, the masters and the
    // replicas counted right, none in handshake or failing.
    const QDeadlineTimer known(30000);
    for (const auto &n : m_nodes) {
        while (true) {
            auto lines = n->command({"CLUSTER", "NODES"});
            int masters = 0, replicas = 0, troubled = 0;
            for (const QByteArray &line : lines ? lines->str.split('\n') : QList<QByteArray>{}) {
                const QList<QByteArray> fields = line.split(' ');
                if (fields.size() < 3)
                    continue;
                masters += fields[2].contains("master") ? 1 : 0;
                replicas += fields[2].contains("slave") ? 1 : 0;
                troubled += fields[2].contains("handshake") || fields[2].contains("fail") || fields[2].contains("noaddr");
            }
            if (masters == m_masters && replicas == m_masters * m_replicas && troubled == 0)
                break;
            if (known.hasExpired()) {
                m_error = u"node on port %1 does not know every node in its role"_s.arg(n->port());
                return false;
            }
            QThread::msleep(50);
        }
    }
    // Replicas in sync with their masters (a failover or WAIT needs them).
    const QDeadlineTimer synced(30000);
    for (const auto &n : m_nodes) {
        while (true) {
            auto info = n->command({"INFO", "replication"});
            if (info && (info->str.contains("role:master") || info->str.contains("master_link_status:up")))
                break;
            if (synced.hasExpired()) {
                m_error = u"replica on port %1 did not sync with its master"_s.arg(n->port());
                return false;
            }
            QThread::msleep(50);
        }
    }
    return true;
}

RedisUrl ClusterFixture::url(int timeoutMs) const
{
    QList<RedisNodeAddress> seeds;
    for (const auto &n : m_nodes)
        seeds.append({u"127.0.0.1"_s, n->port()});
    RedisUrl u = RedisUrl::cluster(seeds);
    u.connectTimeoutMs = 300;
    u.timeoutMs = timeoutMs;
    return u;
}

RedisFixture *ClusterFixture::byPort(int port) const
{
    for (const auto &n : m_nodes)
        if (n->port() == port)
            return n.get();
    return nullptr;
}

RedisFixture *ClusterFixture::masterOf(int slot) const
{
    for (const auto &n : m_nodes) {
        if (!n->isRunning())
            continue;
        for (const auto &[first, last, port] : slotTable(*n))
            if (slot >= first && slot <= last)
                return byPort(int(port));
        return nullptr;
    }
    return nullptr;
}

QList<RedisFixture *> ClusterFixture::masters() const
{
    QList<RedisFixture *> out;
    for (const auto &n : m_nodes)
        if (n->isRunning())
            if (auto role = n->command({"ROLE"}); role && role->elements.value(0).str == "master")
                out.append(n.get());
    return out;
}

QList<RedisFixture *> ClusterFixture::replicasOf(RedisFixture *master) const
{
    QList<RedisFixture *> out;
    auto lines = master->command({"CLUSTER", "REPLICAS", idOf(master)});
    if (!lines)
        return out;
    // Each entry: "<id> <ip:port@bus> <flags> ..."
    for (const RedisValue &line : lines->elements) {
        const QList<QByteArray> fields = line.str.split(' ');
        if (fields.size() < 2)
            continue;
        const QByteArray endpoint = fields[1].left(fields[1].indexOf('@'));
        if (RedisFixture *r = byPort(endpoint.mid(endpoint.lastIndexOf(':') + 1).toInt()))
            out.append(r);
    }
    return out;
}

QByteArray ClusterFixture::idOf(RedisFixture *node) const
{
    auto id = node->command({"CLUSTER", "MYID"});
    return id ? id->str : QByteArray();
}

bool ClusterFixture::waitUntilStable(int timeoutMs, int slot) const
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        bool ok = true;
        std::optional<QList<std::tuple<qint64, qint64, qint64>>> agreed;
        for (const auto &n : m_nodes) {
            if (!n->isRunning())
                continue;
            auto info = n->command({"CLUSTER", "INFO"});
            const auto table = slotTable(*n);
            ok = ok && info && info->str.contains("cluster_state:ok") && !table.isEmpty()
                 && (!agreed || *agreed == table);
            agreed = table;
            if (!ok)
                break;
        }
        if (ok && agreed) {
            qint64 covered = 0;
            for (const auto &[first, last, port] : *agreed) {
                RedisFixture *owner = byPort(int(port));
                auto role = owner && owner->isRunning() ? owner->command({"ROLE"}) : Result<RedisValue>{};
                const bool live = owner && owner->isRunning() && role && role->elements.value(0).str == "master";
                if (slot < 0 || (slot >= first && slot <= last))
                    ok = ok && live;
                covered += last - first + 1;
            }
            if (ok && covered == HashSlot::kCount)
                return true;
        }
        QThread::msleep(50);
    }
    return false;
}

bool ClusterFixture::checked(const Result<RedisValue> &r, const QString &what)
{
    if (r && !r->isError())
        return true;
    m_error = u"%1: %2"_s.arg(what, r ? QString::fromUtf8(r->str) : r.error().message);
    return false;
}

bool ClusterFixture::migrateSlot(int slot, RedisFixture *from, RedisFixture *to,
                                 const std::function<void()> &whileMigrating, const std::function<void()> &afterMove,
                                 bool oneByOne, const std::function<void()> &betweenKeys)
{
    const QByteArray s = QByteArray::number(slot);
    const QByteArray fromId = idOf(from), toId = idOf(to);
    if (!checked(to->command({"CLUSTER", "SETSLOT", s, "IMPORTING", fromId}), u"SETSLOT IMPORTING"_s)
        || !checked(from->command({"CLUSTER", "SETSLOT", s, "MIGRATING", toId}), u"SETSLOT MIGRATING"_s))
        return false;
    if (whileMigrating)
        whileMigrating();
    auto keys = from->command({"CLUSTER", "GETKEYSINSLOT", s, "1000"});
    if (!checked(keys, u"GETKEYSINSLOT"_s))
        return false;
    QList<QList<QByteArray>> batches;
    for (const RedisValue &k : keys->elements) {
        if (oneByOne || batches.isEmpty())
            batches.append(QList<QByteArray>{});
        batches.last().append(k.str);
    }
    for (const QList<QByteArray> &batch : std::as_const(batches)) {
        QList<QByteArray> argv{"MIGRATE", "127.0.0.1", QByteArray::number(to->port()), "", "0", "5000", "KEYS"};
        argv << batch;
        if (!checked(from->command(argv), u"MIGRATE"_s))
            return false;
        if (oneByOne && betweenKeys)
            betweenKeys();
    }
    if (afterMove)
        afterMove();
    // The target first, then the source, then everyone else (the order Redis documents).
    if (!checked(to->command({"CLUSTER", "SETSLOT", s, "NODE", toId}), u"SETSLOT NODE on the target"_s)
        || !checked(from->command({"CLUSTER", "SETSLOT", s, "NODE", toId}), u"SETSLOT NODE on the source"_s))
        return false;
    for (RedisFixture *m : masters())
        if (m != to && m != from)
            (void)m->command({"CLUSTER", "SETSLOT", s, "NODE", toId});
    return true;
}

} // namespace flashstock
