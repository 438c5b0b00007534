#pragma once

#include "Result.h"
#include "gate/RedisUrl.h"

#include <QString>

namespace flashstock {

/// The drill's gate-wide faults: restarting Redis and flushing its script cache. Blocking;
/// use from one thread (the drill's controller).
class DrillGateFaults {
public:
    /// `embeddedDataDir` set: the gate is that data dir's private redis-server, which
    /// restart() really stops and starts. Empty: an external server, which is never stopped.
    DrillGateFaults(RedisUrl url, QString embeddedDataDir);

    /// Embedded: stops the redis-server (SHUTDOWN, append-only file flushed) and starts it
    /// again. External: kills only this process's own TCP connections to the server (found
    /// through /proc/self, matched by address in CLIENT LIST, killed by id); with a unix
    /// socket they cannot be told apart from other clients', so nothing is killed and
    /// Unavailable says so. Returns what was done, for the report.
    [[nodiscard]] Result<QString> restart();
    /// SCRIPT FLUSH on the gate's server.
    [[nodiscard]] Result<void> flushScripts();
    /// True when restart() really restarts a server.
    bool isEmbedded() const { return !m_dataDir.isEmpty(); }

private:
    Result<QString> killOwnConnections();

    RedisUrl m_url;
    QString m_dataDir;
};

} // namespace flashstock
