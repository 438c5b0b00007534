#pragma once

#include "ServerState.h"
#include "WorkerLoop.h"
#include "open/EngineOpener.h"
#include "store/Database.h"

#include <functional>
#include <mutex>
#include <optional>

namespace flashstock {
class UnknownOutcomes;
}

namespace flashstock::server {

class ServerMetrics;

/// How often the server's background work runs, in seconds (0: never).
struct HousekeepingPlan {
    int expireEvery = 1;      ///< release due holds, with the heartbeat (Engine::expireAsExpirer)
    int reconcileEvery = 0;   ///< one reconcile pass (Reconciler::runPass)
    int reconcileGraceSeconds = 30; ///< a held token this old (Redis time) counts as orphaned
};

/// The server's background threads, each with its own engine: expiry, reconciliation (when
/// asked for), and the refresher that keeps the request threads' snapshots fresh: the valid
/// bearer tokens (every 1 s; a revoke takes effect within 5 s, and tokens not read for 5 s
/// are not taken: kTokensTrustedFor), readiness and the book's replication (every 1 s, also
/// /metrics' book and gate gauges) and, every 5 s, what /metrics shows of the book: the
/// levels of SKUs with an open sale, the discrepancies waiting for approval, the holds past
/// expiry and the expirers' heartbeats, and the last reconcile pass; a scrape reads none of
/// them from the book. Each second it also resolves the gate tokens reserves left held for a
/// book outcome they could not learn (UnknownOutcomes: settled, or given back after a fence).
class Housekeeping {
public:
    Housekeeping(ResolvedProfile profile, HousekeepingPlan plan, ServerMetrics &metrics,
                 Published<AccessTokenSet> &tokens, Published<Readiness> &readiness, UnknownOutcomes &unknown);
    ~Housekeeping();

    /// Opens the threads' engines and runs the refresher once, so tokens and readiness are
    /// known before the first request. The first open's error if one fails.
    [[nodiscard]] Result<void> start();
    /// Stops every thread (an expiry or reconcile pass under way finishes first).
    void stop();
    /// Where the server listens (`HOST:PORT`), written into the expiry heartbeat from its
    /// next pass on, so consoles can read its /readyz and /metrics. Any thread.
    void setListenAddress(const QString &address);

private:
    /// Runs `work` now and every `seconds` s on a thread of its own until stop().
    Result<void> every(int seconds, std::function<void(Engine &)> work);
    void refresh(Engine &engine, qint64 tick);
    /// The book's figures /metrics shows (discrepancies, expiry, the last reconcile pass).
    void readBookFigures(Engine &engine);
    void probe(Engine &engine);
    /// Logs when the book starts or stops refusing writes for want of room (refresher thread).
    void logBookRoom(const std::optional<WriteRefusal> &refused);
    /// Settles or gives back the tokens in m_unknown (Reconciler::resolveTokens, with the
    /// reconciler's safe grace); the unresolved stay for the next tick.
    void resolveUnknown(Engine &engine);
    /// The book's replication into `r`, /metrics and the log (a warning while the primary
    /// writes alone or its commits wait for a standby; a line when that ends or the primary
    /// changes).
    void noteReplication(Engine &engine, Readiness &r);

    ResolvedProfile m_profile;
    HousekeepingPlan m_plan;
    ServerMetrics &m_metrics;
    Published<AccessTokenSet> &m_tokens;
    Published<Readiness> &m_readiness;
    bool m_tokensUnread = false; ///< the last read of the tokens failed (refresher thread only)
    UnknownOutcomes &m_unknown;
    std::optional<qint64> m_bookRefusedSince; ///< logBookRoom(): the refusal last logged (refresher thread)
    std::optional<BookReplication> m_replication; ///< as last read (refresher thread only)
    std::mutex m_addressMutex;
    QString m_listenAddress; ///< guarded by m_addressMutex
    WorkerLoop<NoJobs> m_loop;   ///< the threads, each on its own timer
};

} // namespace flashstock::server
