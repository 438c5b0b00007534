#include "drill/DrillGateFaults.h"

#include "gate/EmbeddedRedis.h"
#include "gate/HashSlot.h"
#include "gate/RedisConnection.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSet>
#include <QThread>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <vector>

#include <sys/types.h>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// Inodes of this process's open sockets.
QSet<QString> ownSocketInodes()
{
    QSet<QString> inodes;
    const QDir fds(u"/proc/self/fd"_s);
    for (const QString &fd : fds.entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::System)) {
        const QString target = QFile::symLinkTarget(fds.filePath(fd));
        const QString name = target.isEmpty() ? QFileInfo(fds.filePath(fd)).symLinkTarget() : target;
        const QString base = QFileInfo(name).fileName();
        if (base.startsWith(u"socket:["_s))
            inodes.insert(base.mid(8).chopped(1));
    }
    return inodes;
}

/// `ip:port` of this process's IPv4 TCP sockets connected to `remotePort`.
QSet<QString> ownTcpEndpoints(int remotePort)
{
    const QSet<QString> inodes = ownSocketInodes();
    QSet<QString> out;
    QFile f(u"/proc/self/net/tcp"_s);
    if (!f.open(QIODevice::ReadOnly))
        return out;
    f.readLine(); // header
    while (!f.atEnd()) {
        const QStringList cols = QString::fromLatin1(f.readLine()).simplified().split(u' ');
        if (cols.size() < 10 || !inodes.contains(cols.at(9)))
            continue;
        const QStringList local = cols.at(1).split(u':');
        const QStringList remote = cols.at(2).split(u':');
        if (local.size() != 2 || remote.size() != 2 || remote.at(1).toInt(nullptr, 16) != remotePort)
            continue;
        const quint32 ip = local.at(0).toUInt(nullptr, 16); // little-endian in /proc
        out.insert(u"%1.%2.%3.%4:%5"_s.arg(ip & 0xff).arg((ip >> 8) & 0xff).arg((ip >> 16) & 0xff).arg(ip >> 24)
                       .arg(local.at(1).toInt(nullptr, 16)));
    }
    return out;
}

} // namespace

DrillGateFaults::DrillGateFaults(RedisUrl url, QString embeddedDataDir)
    : m_url(std::move(url))
    , m_dataDir(std::move(embeddedDataDir))
{
}

Result<QString> DrillGateFaults::restart()
{
    if (isEmbedded()) {
        EmbeddedRedis embedded(m_dataDir);
        auto stopped = embedded.stop(10000);
        if (!stopped)
            return std::unexpected(stopped.error());
        auto started = embedded.start();
        if (!started)
            return std::unexpected(started.error());
        return u"embedded redis-server stopped and started again"_s;
    }
    if (m_everyClient) {
        auto servers = this->servers(false);
        if (!servers)
            return std::unexpected(servers.error());
        int killed = 0;
        for (const RedisUrl &server : std::as_const(*servers)) {
            auto k = killEveryClient(server);
            if (!k)
                return std::unexpected(k.error());
            killed += *k;
        }
        return u"external redis: killed all %1 client connections (the server's among them; CLIENT KILL TYPE "
               u"normal); redis-server itself was not restarted"_s.arg(killed);
    }
    if (m_url.kind == RedisUrl::Kind::Unix)
        return fail(ErrorCode::Unavailable,
                    u"external redis on a unix socket: the drill's connections cannot be told apart from other "
                    u"clients', so none were killed"_s);
    if (!m_url.isCluster()) {
        auto killed = killOwnConnections(m_url);
        if (!killed)
            return std::unexpected(killed.error());
        return u"external redis: killed %1 of the drill's own connections (CLIENT KILL ID); the server was not "
               u"restarted"_s.arg(*killed);
    }
    auto map = readMap();
    if (!map)
        return std::unexpected(map.error());
    int killed = 0, nodes = 0;
    for (const RedisNodeAddress &node : map->nodes()) {
        if (auto k = killOwnConnections(m_url.node(node))) {
            killed += *k;
            ++nodes;
        }
    }
    return u"Redis Cluster: killed %1 of the drill's own connections on %2 of %3 nodes (CLIENT KILL ID); no server "
           u"was restarted"_s.arg(killed).arg(nodes).arg(map->nodes().size());
}

Result<int> DrillGateFaults::killOwnConnections(const RedisUrl &url)
{
    RedisConnection admin(url);
    auto self = admin.command({"CLIENT", "ID"});
    if (!self)
        return std::unexpected(self.error());
    auto list = admin.command({"CLIENT", "LIST"});
    if (!list)
        return std::unexpected(list.error());
    const QSet<QString> ours = ownTcpEndpoints(url.port);
    int killed = 0;
    for (const QByteArray &line : list->str.split('\n')) {
        QString id, addr;
        for (const QByteArray &field : line.trimmed().split(' ')) {
            if (field.startsWith("id="))
                id = QString::fromLatin1(field.mid(3));
            else if (field.startsWith("addr="))
                addr = QString::fromLatin1(field.mid(5));
        }
        if (id.isEmpty() || id.toLongLong() == self->integer || !ours.contains(addr))
            continue;
        auto k = admin.command({"CLIENT", "KILL", "ID", id.toLatin1()});
        if (k && !k->isError())
            ++killed;
    }
    return killed;
}

Result<int> DrillGateFaults::killEveryClient(const RedisUrl &url)
{
    RedisConnection admin(url);
    auto k = admin.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
    if (!k)
        return std::unexpected(k.error());
    if (k->isError())
        return fail(ErrorCode::Unavailable, u"CLIENT KILL refused: %1"_s.arg(QString::fromUtf8(k->str)), u"redis"_s);
    return int(k->integer);
}

Result<SlotMap> DrillGateFaults::readMap()
{
    Error last{ErrorCode::Unavailable, u"no seed node"_s, u"redis"_s};
    for (const RedisNodeAddress &seed : m_url.seeds) {
        RedisConnection c(m_url.node(seed));
        bool shardsUnknown = false;
        auto map = SlotMap::read(c, seed, shardsUnknown);
        if (map && map->assignedSlots() > 0)
            return map;
        if (!map)
            last = map.error();
    }
    return std::unexpected(last);
}

Result<QList<RedisUrl>> DrillGateFaults::servers(bool mastersOnly)
{
    if (!m_url.isCluster())
        return QList<RedisUrl>{m_url};
    auto map = readMap();
    if (!map)
        return std::unexpected(map.error());
    QList<RedisUrl> out;
    for (const RedisNodeAddress &node : mastersOnly ? map->masters() : map->nodes())
        out.append(m_url.node(node));
    return out;
}

Result<void> DrillGateFaults::flushScripts()
{
    auto servers = this->servers(true);
    if (!servers)
        return std::unexpected(servers.error());
    for (const RedisUrl &server : std::as_const(*servers)) {
        // Right after a restart the server may still answer LOADING (or not yet accept): retry.
        Error last{ErrorCode::Unavailable, {}, {}};
        bool flushed = false;
        for (int attempt = 0; attempt < 100 && !flushed; ++attempt) {
            if (attempt > 0)
                QThread::msleep(50);
            RedisConnection admin(server);
            auto r = admin.command({"SCRIPT", "FLUSH"});
            if (!r)
                last = r.error();
            else if (r->isError())
                last = {ErrorCode::Internal, u"SCRIPT FLUSH failed: %1"_s.arg(QString::fromUtf8(r->str)), {}};
            else
                flushed = true;
        }
        if (!flushed)
            return std::unexpected(last);
    }
    return {};
}

namespace {

/// A redis-server of this machine stopped with SIGSTOP; SIGCONT when it goes out of scope.
class StoppedProcess {
public:
    explicit StoppedProcess(qint64 pid) : m_pid(pid) {}
    ~StoppedProcess() { resume(); }
    StoppedProcess(const StoppedProcess &) = delete;
    StoppedProcess &operator=(const StoppedProcess &) = delete;
    bool stop() { return m_stopped = ::kill(pid_t(m_pid), SIGSTOP) == 0; }
    void resume()
    {
        if (std::exchange(m_stopped, false))
            ::kill(pid_t(m_pid), SIGCONT);
    }

private:
    qint64 m_pid;
    bool m_stopped = false;
};

/// `name:value` of an INFO reply, or empty.
QByteArray infoField(const RedisValue &info, const QByteArray &name)
{
    for (const QByteArray &line : info.str.split('\n'))
        if (line.startsWith(name + ':'))
            return line.mid(name.size() + 1).trimmed();
    return {};
}

bool isLoopback(const QString &host)
{
    return host == u"localhost"_s || host == u"::1"_s || host.startsWith(u"127."_s);
}

} // namespace

Result<QString> DrillGateFaults::failOver(const QString &sku, const std::function<void()> &whileStopped)
{
    if (!m_url.isCluster())
        return fail(ErrorCode::Unavailable, u"node-failover needs a Redis Cluster gate"_s);
    auto map = readMap();
    if (!map)
        return std::unexpected(map.error());
    const int slot = HashSlot::ofSku(sku);
    const auto victim = map->masterOf(slot);
    if (!victim)
        return fail(ErrorCode::Unavailable, u"no master serves hash slot %1 of %2"_s.arg(slot).arg(sku));
    RedisConnection admin(m_url.node(*victim));
    auto server = admin.command({"INFO", "server"});
    auto replication = admin.command({"INFO", "replication"});
    if (!server || !replication)
        return std::unexpected(!server ? server.error() : replication.error());
    const qint64 pid = infoField(*server, "process_id").toLongLong();
    // A process of this machine (the same pid namespace) by that pid that is a redis-server.
    QFile comm(u"/proc/%1/comm"_s.arg(pid));
    if (!isLoopback(victim->host) || pid <= 0 || !comm.open(QIODevice::ReadOnly)
        || !comm.readAll().startsWith("redis-server"))
        return fail(ErrorCode::Unavailable,
                    u"master %1 of %2 cannot be stopped from here: node-failover stops a redis-server of this machine "
                    u"(loopback) with SIGSTOP"_s.arg(victim->toString(), sku));
    if (!replication->str.contains("state=online"))
        return fail(ErrorCode::Unavailable,
                    u"master %1 of %2 has no replica online: stopping it would leave its slots without a master"_s.arg(
                        victim->toString(), sku));
    qint64 nodeTimeoutMs = 15000;
    if (auto t = admin.command({"CONFIG", "GET", "cluster-node-timeout"}); t && t->elements.size() == 2)
        nodeTimeoutMs = t->elements[1].toInteger(nodeTimeoutMs);
    const qint64 boundMs = std::clamp<qint64>(nodeTimeoutMs * 10, 10000, 120000);
    admin.disconnect();

    // The other nodes, each asked in turn who owns the slot now.
    std::vector<std::unique_ptr<RedisConnection>> others;
    for (const RedisNodeAddress &n : map->nodes())
        if (!(n == *victim))
            others.push_back(std::make_unique<RedisConnection>(m_url.node(n)));

    StoppedProcess stopped(pid);
    QElapsedTimer clock;
    clock.start();
    if (!stopped.stop())
        return fail(ErrorCode::Unavailable, u"SIGSTOP to redis-server %1 (pid %2) failed: %3"_s.arg(victim->toString())
                                                .arg(pid)
                                                .arg(QString::fromLocal8Bit(strerror(errno))));
    if (whileStopped)
        whileStopped();
    std::optional<RedisNodeAddress> promoted;
    while (!promoted && clock.elapsed() < boundMs) {
        for (auto &c : others) {
            bool shardsUnknown = false;
            const RedisNodeAddress asked{c->url().host, c->url().port};
            auto now = SlotMap::read(*c, asked, shardsUnknown);
            const auto owner = now ? now->masterOf(slot) : std::nullopt;
            if (!owner || *owner == *victim)
                continue;
            RedisConnection check(m_url.node(*owner));
            if (auto role = check.command({"ROLE"}); role && role->elements.value(0).str == "master") {
                promoted = owner;
                break;
            }
        }
        if (!promoted)
            QThread::msleep(50);
    }
    const qint64 stoppedMs = clock.elapsed();
    stopped.resume();
    if (!promoted)
        return fail(ErrorCode::Unavailable, u"master %1 of %2 stopped for %3 ms and no replica took over; it runs "
                                            u"again as master"_s.arg(victim->toString(), sku).arg(stoppedMs));
    // The old master learns of the new epoch and turns replica; wait a little for that, so
    // the drill goes on with a settled cluster (not an error if it takes longer).
    QString after = u"it did not report itself a replica within 10 s"_s;
    for (const QDeadlineTimer rejoin(10000); !rejoin.hasExpired(); QThread::msleep(50)) {
        RedisConnection old(m_url.node(*victim));
        if (auto role = old.command({"ROLE"}); role && role->elements.value(0).str == "slave") {
            after = u"it runs again as its replica"_s;
            break;
        }
    }
    return u"master %1 of %2 stopped (SIGSTOP) for %3 ms until its replica %4 took over hash slot %5; %6"_s
        .arg(victim->toString(), sku)
        .arg(stoppedMs)
        .arg(promoted->toString())
        .arg(slot)
        .arg(after);
}

} // namespace flashstock
