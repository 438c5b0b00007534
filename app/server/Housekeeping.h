#pragma once

#include "ServerState.h"
#include "open/EngineOpener.h"

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace flashstock::server {

class EngineThread;
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
/// are not taken: kTokensTrustedFor), readiness (every 1 s) and the levels of SKUs with an
/// open sale for /metrics (every 5 s).
class Housekeeping {
public:
    Housekeeping(ResolvedProfile profile, HousekeepingPlan plan, ServerMetrics &metrics,
                 Published<AccessTokenSet> &tokens, Published<Readiness> &readiness);
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
    Result<void> every(const QString &name, int seconds, std::function<void(Engine &)> work);
    void refresh(Engine &engine, qint64 tick);
    void probe(Engine &engine);

    ResolvedProfile m_profile;
    HousekeepingPlan m_plan;
    ServerMetrics &m_metrics;
    Published<AccessTokenSet> &m_tokens;
    Published<Readiness> &m_readiness;
    bool m_tokensUnread = false; ///< the last read of the tokens failed (refresher thread only)
    std::vector<std::unique_ptr<EngineThread>> m_threads;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    QString m_listenAddress; ///< guarded by m_mutex
};

} // namespace flashstock::server
