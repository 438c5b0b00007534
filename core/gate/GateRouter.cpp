#include "gate/GateRouter.h"

#include "gate/GateNode.h"

#include <QDeadlineTimer>
#include <QThread>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The slot and node of a redirection, `MOVED 3999 127.0.0.1:6381` or `ASK ...`.
struct Redirect {
    int slot = -1;
    RedisNodeAddress to;
};

std::optional<Redirect> parseRedirect(const QByteArray &error)
{
    const QList<QByteArray> parts = error.split(' ');
    if (parts.size() < 3)
        return std::nullopt;
    bool ok = false;
    const int slot = parts[1].toInt(&ok);
    const auto to = RedisNodeAddress::parse(QString::fromUtf8(parts[2]));
    if (!ok || !to)
        return std::nullopt;
    return Redirect{slot, *to};
}

} // namespace

/// One command on its way: where its next send goes and which retries it used.
struct GateRouter::Pending {
    qsizetype index = 0;                  ///< into the commands of execute()
    std::optional<RedisNodeAddress> askTo; ///< ASK: the next send goes there, after ASKING
    bool asked = false;                   ///< followed an ASK since its last TRYAGAIN
    int redirects = 0;                    ///< MOVED and ASK followed
    bool reloaded = false;                ///< NOSCRIPT: scripts loaded and the command resent
    bool eval = false;                    ///< NOSCRIPT again: sent as EVAL
};

/// The commands of one round that go to one node, in one pipeline.
struct GateRouter::Batch {
    GateNode *node = nullptr;
    QList<Pending> pending;
    qsizetype replies = 0; ///< commands sent (so replies to read); 0 = nothing sent
    bool waits = false;    ///< the pipeline ends with WAIT
};

GateRouter::GateRouter(RedisUrl url)
    : m_url(std::move(url))
{
    if (!m_url.isCluster())
        m_single = std::make_unique<GateNode>(m_url, false);
}

GateRouter::~GateRouter() = default;

int GateRouter::connectCount() const
{
    int n = m_single ? m_single->connectCount() : 0;
    for (const auto &[address, node] : m_nodes)
        n += node->connectCount();
    return n;
}

GateNode &GateRouter::node(const RedisNodeAddress &address)
{
    auto &slot = m_nodes[address.toString()];
    if (!slot)
        slot = std::make_unique<GateNode>(m_url.node(address), true);
    return *slot;
}

Result<void> GateRouter::connect()
{
    if (m_single)
        return m_single->prepare();
    if (auto r = refreshMap(); !r)
        return r;
    // A master that does not answer shows in its commands' answers and in health().
    for (const RedisNodeAddress &m : m_map->masters())
        (void)node(m).prepare();
    return {};
}

void GateRouter::refreshIfDue()
{
    const qint64 age = m_mapAge.isValid() ? m_mapAge.elapsed() : kRefreshMs;
    if (age >= kRefreshMs || ((m_refreshWanted || !m_map) && age >= kTroubleRefreshMs))
        (void)refreshMap();
}

Result<void> GateRouter::refreshMap()
{
    m_mapAge.start();
    // Known nodes first (masters, then replicas: a promoted replica knows the new map), then
    // the seeds of the URL; of those, the nodes that answered this router most recently first
    // and the ones that failed since they last answered last, so a hung node is not asked
    // while another can answer (a gate that serves some masters' SKUs never waits on another).
    QList<RedisNodeAddress> candidates = m_map ? m_map->nodes() : QList<RedisNodeAddress>{};
    for (const RedisNodeAddress &seed : m_url.seeds)
        if (!candidates.contains(seed))
            candidates.append(seed);
    const auto askFirst = [this](const RedisNodeAddress &a, const RedisNodeAddress &b) {
        const GateNode &x = node(a), &y = node(b);
        if (x.troubled() != y.troubled())
            return !x.troubled();
        return x.answeredAt() > y.answeredAt();
    };
    std::stable_sort(candidates.begin(), candidates.end(), askFirst);
    QString lastError = u"no node to ask"_s;
    for (const RedisNodeAddress &address : std::as_const(candidates)) {
        GateNode &n = node(address);
        if (auto ready = n.prepare(); !ready) {
            lastError = ready.error().message;
            continue;
        }
        auto map = n.noted(SlotMap::read(n.connection(), address, m_shardsUnknown));
        if (!map && map.error().code == ErrorCode::InvalidArgument)
            return std::unexpected(map.error());
        if (!map) {
            lastError = map.error().message;
            continue;
        }
        if (map->assignedSlots() == 0) {
            lastError = u"%1 knows no slot owner yet"_s.arg(address.toString());
            continue;
        }
        const bool changed = !m_map || *m_map != *map;
        m_map = std::move(*map);
        m_refreshWanted = false;
        if (changed && m_mapListener)
            m_mapListener(*m_map);
        return {};
    }
    m_refreshWanted = true;
    m_mapError = u"no node of the Redis Cluster %1 gave its slot map: %2"_s.arg(m_url.toDisplayString(), lastError);
    return fail(ErrorCode::Unavailable, m_mapError, u"redis"_s);
}

GateNode *GateRouter::route(const GateCommand &command, const Pending &p, QString &why, bool &unowned)
{
    if (m_single)
        return m_single.get();
    if (p.askTo)
        return &node(*p.askTo);
    if (!m_map) {
        why = m_mapError;
        return nullptr;
    }
    if (command.slot < 0) {
        // Any master will do: one that answers, else one not skipped.
        const QList<RedisNodeAddress> masters = m_map->masters();
        for (const RedisNodeAddress &m : masters)
            if (GateNode &n = node(m); !n.skipped() && !n.troubled())
                return &n;
        for (const RedisNodeAddress &m : masters)
            if (GateNode &n = node(m); !n.skipped())
                return &n;
        if (!masters.isEmpty())
            return &node(masters.first());
        why = u"the Redis Cluster %1 has no master"_s.arg(m_url.toDisplayString());
        return nullptr;
    }
    const auto owner = m_map->masterOf(command.slot);
    if (!owner) {
        m_refreshWanted = true;
        unowned = true;
        why = u"hash slot %1 has no master in the Redis Cluster %2 (CLUSTERDOWN)"_s.arg(command.slot).arg(
            m_url.toDisplayString());
        return nullptr;
    }
    return &node(*owner);
}

Result<RedisValue> GateRouter::execute(const GateCommand &command) { return execute(QList<GateCommand>{command}).first(); }

QList<Result<RedisValue>> GateRouter::execute(const QList<GateCommand> &commands)
{
    QList<std::optional<Result<RedisValue>>> results(commands.size());
    QList<Pending> queue;
    queue.reserve(commands.size());
    for (qsizetype i = 0; i < commands.size(); ++i) {
        Pending p;
        p.index = i;
        queue.append(p);
    }
    const QDeadlineTimer retryUntil(m_url.timeoutMs);
    int backoffMs = 2;
    while (!queue.isEmpty()) {
        if (m_url.isCluster())
            refreshIfDue();
        std::vector<Batch> batches;
        QList<Pending> again;
        bool backoff = false;
        for (const Pending &p : std::as_const(queue)) {
            QString why;
            bool unowned = false;
            GateNode *n = route(commands[p.index], p, why, unowned);
            if (!n && unowned && !retryUntil.hasExpired()) {
                // A slot no master serves is a cluster reconfiguring: like CLUSTERDOWN.
                again.append(p);
                backoff = true;
                continue;
            }
            if (!n) {
                results[p.index] = fail(ErrorCode::Unavailable, why, u"redis"_s);
                continue;
            }
            auto it = std::find_if(batches.begin(), batches.end(), [n](const Batch &b) { return b.node == n; });
            if (it == batches.end())
                it = batches.insert(batches.end(), Batch{n, {}});
            it->pending.append(p);
        }
        // Every node gets its pipeline before any reply is read, so the nodes work at once.
        for (Batch &b : batches)
            send(commands, b, results, again);
        const bool retryExpired = retryUntil.hasExpired();
        for (Batch &b : batches)
            receive(commands, b, results, again, backoff, retryExpired);
        queue = std::move(again);
        if (backoff && !queue.isEmpty()) {
            QThread::msleep(ulong(std::clamp<qint64>(retryUntil.remainingTime(), 1, backoffMs)));
            backoffMs = std::min(backoffMs * 2, 50);
        }
    }
    QList<Result<RedisValue>> out;
    out.reserve(results.size());
    for (auto &r : results)
        out.append(std::move(*r));
    return out;
}

void GateRouter::send(const QList<GateCommand> &commands, Batch &b, QList<std::optional<Result<RedisValue>>> &results,
                      QList<Pending> &again)
{
    auto failAll = [&](const Error &e) {
        for (const Pending &p : std::as_const(b.pending))
            results[p.index] = std::unexpected(e);
    };
    if (auto ready = b.node->prepare(); !ready) {
        if (!m_url.isCluster()) {
            failAll(ready.error());
            return;
        }
        // Nothing was sent, so a resend is safe: a master that does not answer may have been
        // replaced by its replica (or, for TIME, any other master will do).
        m_refreshWanted = true;
        refreshIfDue();
        for (Pending p : std::as_const(b.pending)) {
            QString why;
            bool unowned = false;
            GateNode *now = p.redirects < kMaxRedirects ? route(commands[p.index], p, why, unowned) : nullptr;
            if (now && now != b.node) {
                ++p.redirects;
                again.append(p);
            } else {
                results[p.index] = std::unexpected(ready.error());
            }
        }
        return;
    }
    QList<QList<QByteArray>> argvs;
    argvs.reserve(b.pending.size() + 1);
    for (const Pending &p : std::as_const(b.pending)) {
        const GateCommand &c = commands[p.index];
        if (p.askTo)
            argvs.append({QByteArrayLiteral("ASKING")});
        argvs.append(p.eval ? ScriptRegistry::instance().asEval(*c.script, c.argv) : c.argv);
        b.waits = b.waits || c.writes;
    }
    b.waits = b.waits && m_url.waitReplicas > 0;
    if (b.waits)
        argvs.append({QByteArrayLiteral("WAIT"), QByteArray::number(m_url.waitReplicas),
                      QByteArray::number(m_url.waitTimeoutMs())});
    if (auto sent = b.node->send(argvs); !sent) {
        m_refreshWanted = m_url.isCluster();
        failAll(sent.error());
        return;
    }
    b.replies = argvs.size();
}

void GateRouter::receive(const QList<GateCommand> &commands, Batch &b, QList<std::optional<Result<RedisValue>>> &results,
                         QList<Pending> &again, bool &backoff, bool retryExpired)
{
    if (b.replies == 0)
        return;
    auto replies = b.node->receive(b.replies);
    if (!replies) {
        m_refreshWanted = m_url.isCluster();
        for (const Pending &p : std::as_const(b.pending))
            results[p.index] = std::unexpected(replies.error());
        return;
    }
    const bool cluster = m_url.isCluster();
    qsizetype k = 0;
    QList<qsizetype> executedWrites;
    bool reloaded = false;
    for (Pending p : std::as_const(b.pending)) {
        if (p.askTo)
            ++k; // ASKING's +OK
        const RedisValue &r = replies->at(k++);
        const GateCommand &c = commands[p.index];
        const bool moved = r.isErrorWith("MOVED "), ask = r.isErrorWith("ASK ");
        if (cluster && (moved || (ask && !p.asked)) && p.redirects < kMaxRedirects) {
            if (const auto redirect = parseRedirect(r.str)) {
                ++p.redirects;
                if (moved) {
                    if (m_map)
                        m_map->assign(redirect->slot, redirect->to);
                    m_refreshWanted = true; // more slots may have moved with it
                    p.askTo.reset();
                } else {
                    p.asked = true;
                    p.askTo = redirect->to;
                }
                again.append(p);
                continue;
            }
        }
        if (cluster && !retryExpired
            && (r.isErrorWith("TRYAGAIN") || r.isErrorWith("CLUSTERDOWN") || r.isErrorWith("READONLY"))) {
            // TRYAGAIN: the slot migrates and its keys are split; the next try starts at the
            // owner again (which may ASK once more). CLUSTERDOWN, READONLY: a failover.
            if (!r.isErrorWith("TRYAGAIN"))
                m_refreshWanted = true;
            p.askTo.reset();
            p.asked = false;
            backoff = true;
            again.append(p);
            continue;
        }
        if (r.isErrorWith("NOSCRIPT") && c.script && !p.eval) {
            // The node lost its script cache (flush, restart, a promoted replica): it lost all
            // of them, so load all once, resend; a second NOSCRIPT sends the body (EVAL).
            if (p.reloaded) {
                p.eval = true;
            } else {
                if (!reloaded) {
                    if (auto loaded = b.node->reloadScripts(); !loaded) {
                        results[p.index] = std::unexpected(loaded.error());
                        continue;
                    }
                    reloaded = true;
                }
                p.reloaded = true;
            }
            again.append(p);
            continue;
        }
        results[p.index] = r;
        if (c.writes && !r.isError())
            executedWrites.append(p.index);
    }
    if (b.waits) {
        const RedisValue &acks = replies->last();
        if (acks.type != RedisValue::Type::Integer || acks.integer < m_url.waitReplicas) {
            const Error unconfirmed{ErrorCode::Unavailable,
                                    u"a gate write on %1 was confirmed by %2 of %3 replicas within %4 ms (WAIT): it "
                                    u"stands on the master and a failover may lose it"_s.arg(b.node->address())
                                        .arg(acks.type == RedisValue::Type::Integer ? acks.integer : 0)
                                        .arg(m_url.waitReplicas)
                                        .arg(m_url.waitTimeoutMs()),
                                    u"redis"_s};
            for (qsizetype i : std::as_const(executedWrites))
                results[i] = std::unexpected(unconfirmed);
        }
    }
}

Result<void> GateRouter::forEachServingNode(const std::function<Result<void>(RedisConnection &)> &work)
{
    QList<GateNode *> serving;
    if (m_single) {
        serving.append(m_single.get());
    } else {
        if (auto r = refreshMap(); !r)
            return r;
        for (const RedisNodeAddress &m : m_map->masters())
            serving.append(&node(m));
    }
    for (GateNode *n : std::as_const(serving)) {
        if (auto ready = n->prepare(); !ready)
            return ready;
        if (auto done = n->noted(work(n->connection())); !done)
            return done;
    }
    return {};
}

QList<GateNodeHealth> GateRouter::health()
{
    QList<GateNodeHealth> out;
    const auto probe = [&](GateNode &n, GateNodeHealth::Role role, int ownedSlots) {
        GateNodeHealth h;
        h.address = n.address();
        h.role = role;
        h.slotCount = ownedSlots;
        // A new connection loads the scripts (as every call does); an existing one is only
        // inspected, so a flushed cache shows as scriptsLoaded == false.
        if (auto ready = n.prepare(); !ready) {
            h.detail = ready.error().message;
            out.append(h);
            return;
        }
        QElapsedTimer timer;
        timer.start();
        auto pong = n.noted(n.connection().command({QByteArrayLiteral("PING")}));
        h.roundTripUs = timer.nsecsElapsed() / 1000;
        if (!pong || pong->isError()) {
            h.detail = pong ? QString::fromUtf8(pong->str) : pong.error().message;
            out.append(h);
            return;
        }
        h.reachable = true;
        if (role != GateNodeHealth::Role::Replica) {
            auto loaded = ScriptRegistry::instance().allLoaded(n.connection());
            h.scriptsLoaded = loaded && *loaded;
            if (!loaded)
                h.detail = loaded.error().message;
            else if (!*loaded)
                h.detail = u"gate scripts are not in the server's script cache (flushed or restarted); the next call "
                           u"loads them"_s;
        }
        out.append(h);
    };
    if (m_single) {
        probe(*m_single, GateNodeHealth::Role::Single, 0);
        return out;
    }
    (void)refreshMap(); // fresh for people; an older map is still shown when no node answers
    if (!m_map) {
        for (const RedisNodeAddress &seed : m_url.seeds) {
            GateNodeHealth h;
            h.address = seed.toString();
            h.role = GateNodeHealth::Role::Master;
            h.detail = m_mapError;
            out.append(h);
        }
        return out;
    }
    for (const RedisNodeAddress &m : m_map->masters())
        probe(node(m), GateNodeHealth::Role::Master, m_map->slotCount(m));
    for (const RedisNodeAddress &m : m_map->masters())
        for (const RedisNodeAddress &r : m_map->replicasOf(m))
            probe(node(r), GateNodeHealth::Role::Replica, 0);
    return out;
}

} // namespace flashstock
