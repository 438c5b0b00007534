#pragma once

#include "Result.h"
#include "gate/RedisUrl.h"
#include "gate/SlotMap.h"

#include <QString>

#include <functional>

namespace flashstock {

/// The drill's gate-wide faults: restarting Redis, flushing its script cache, and (on a
/// Redis Cluster) stopping a master so that its replica takes over. Blocking; use from one
/// thread (the drill's controller).
class DrillGateFaults {
public:
    /// `embeddedDataDir` set: the gate is that data dir's private redis-server, which
    /// restart() really stops and starts. Empty: an external server, which is never stopped.
    DrillGateFaults(RedisUrl url, QString embeddedDataDir);

    /// Embedded: stops the redis-server (SHUTDOWN, append-only file flushed) and starts it
    /// again. External: kills only this process's own TCP connections to the server, or to
    /// every node of a cluster (found through /proc/self, matched by address in CLIENT LIST,
    /// killed by id); with a unix socket they cannot be told apart from other clients', so
    /// nothing is killed and Unavailable says so. Returns what was done, for the report.
    [[nodiscard]] Result<QString> restart();
    /// SCRIPT FLUSH on the gate's server, or on every master of a cluster.
    [[nodiscard]] Result<void> flushScripts();
    /// node-failover: stops the master that serves `sku` (SIGSTOP to its redis-server, which
    /// must run on this machine and have a replica online), calls `whileStopped`, waits until
    /// the cluster has promoted a replica for the SKU's slot (at most ten node timeouts, and
    /// 10 s to 120 s), then lets the old master run again (SIGCONT): it rejoins as a replica
    /// of the new one. The stopped master gets SIGCONT on every path. Returns what was done,
    /// for the report. Unavailable if the gate is not a cluster, the master cannot be stopped
    /// (another machine, no replica online) or no replica took over in time.
    [[nodiscard]] Result<QString> failOver(const QString &sku, const std::function<void()> &whileStopped);
    /// True when restart() really restarts a server.
    bool isEmbedded() const { return !m_dataDir.isEmpty(); }
    /// `drill --via`: restart() of an external server kills every normal client's
    /// connections (CLIENT KILL TYPE normal SKIPME yes; the server's among them: what a
    /// restart does to its clients), not only this process's own.
    void setKillEveryClient(bool on) { m_everyClient = on; }

private:
    /// Kills this process's TCP connections to the server of `url` (Tcp); how many.
    Result<int> killOwnConnections(const RedisUrl &url);
    /// The gate's server, or every node (`mastersOnly`: every master) of its cluster.
    Result<QList<RedisUrl>> servers(bool mastersOnly);
    /// The slot map, from the first seed that gives it.
    Result<SlotMap> readMap();

    /// CLIENT KILL TYPE normal SKIPME yes on the server of `url`: how many were killed.
    Result<int> killEveryClient(const RedisUrl &url);

    RedisUrl m_url;
    QString m_dataDir;
    bool m_everyClient = false;
};

} // namespace flashstock
