#pragma once

#include "Result.h"
#include "gate/RedisUrl.h"

#include <QString>

#include <utility>

class QLockFile;

namespace flashstock {

/// Where the private redis-server of a data dir is and whether it answers.
struct EmbeddedRedisStatus {
    bool running = false;  ///< answers PING on its socket
    bool processAlive = false; ///< its process exists (running or not: alive but not answering)
    qint64 pid = 0;        ///< from the pid file; 0 if unknown
    QString socketPath;    ///< DATA_DIR/redis.sock
    QString workDir;       ///< DATA_DIR/redis: append-only files, pid file, log
    QString logFile;       ///< DATA_DIR/redis/redis.log
    QString url;           ///< unix:///.../redis.sock
    bool held = false;     ///< kept down for maintenance (stop with a hold): nothing starts it
    QString heldBy;        ///< who put the hold, as recorded
    qint64 heldSinceMs = 0; ///< when, ms since the epoch
};

/// What EmbeddedRedis::stop() did.
struct EmbeddedStopped {
    bool wasRunning = false; ///< a server was running and is stopped now
    qint64 pid = 0;          ///< the server stopped (0 if none, or its pid was unknown)
    bool held = false;       ///< it is kept down until start(releaseHold)
    qint64 otherClients = 0; ///< stopIfUnused(): the clients it found connected, so it left the server running
};

/// The private redis-server of a FlashStock data dir (the default gate when no `--redis`
/// is given): unix socket `DATA_DIR/redis.sock` (mode 0700, no TCP port), working dir
/// `DATA_DIR/redis` (0700) with the append-only file on, daemonized with a pid file, so
/// it outlives the command that started it and later commands reuse it.
///
/// Blocking calls; use from one thread at a time. Starts and stops are serialised between
/// processes by a lock file in the working dir, so a command starting the gate waits for a
/// stop in progress instead of racing it. A hold (stop with `holdBy`) keeps it down: start()
/// refuses while it is there, so every command runs as with the gate unreachable.
class EmbeddedRedis {
public:
    /// `dataDir` is the FlashStock data dir; nothing happens until start().
    explicit EmbeddedRedis(QString dataDir);

    /// Whether start() may lift a hold.
    enum class Hold { Respect, Release };

    /// Reuses the server if one answers on the socket, else starts one and waits until it
    /// answers (up to 5 s). Returns its URL. Errors: Unavailable if it is held down (the
    /// message says by whom and since when) unless `hold` is Release (the hold is lifted),
    /// if `redis-server` is not on PATH (the message says so) or does not come up (with the
    /// log's last lines); InvalidArgument if the socket path is too long (over 107 bytes) or
    /// the dir cannot be created.
    [[nodiscard]] Result<RedisUrl> start(Hold hold = Hold::Respect);
    /// True if the last start() found a server already running.
    bool wasReused() const { return m_reused; }

    /// Whether the server answers, and where everything is. Never fails.
    EmbeddedRedisStatus status() const;

    /// Stops the server (SHUTDOWN, which flushes the append-only file) and waits up to
    /// `timeoutMs` for that process to exit, holding the start lock so that no command starts
    /// another meanwhile. `holdBy` non-empty: also keeps it down (recorded as held by that
    /// name, written before the lock is let go), whether or not one was running. Unavailable
    /// if it would not stop, or the lock was not free within 10 s.
    [[nodiscard]] Result<EmbeddedStopped> stop(int timeoutMs = 5000, const QString &holdBy = {});
    /// Stops the server as stop() does, unless a client other than this call's own is
    /// connected to it (CLIENT LIST), which then keeps it running (EmbeddedStopped::otherClients):
    /// for a process that started it and no longer needs it, while a server or a CLI loop may
    /// use it still. Errors as stop().
    [[nodiscard]] Result<EmbeddedStopped> stopIfUnused(int timeoutMs = 5000);

    /// The unix socket path (whether or not a server runs).
    QString socketPath() const;
    /// The unix URL of the socket.
    RedisUrl url() const;

    /// Absolute path of `redis-server` on PATH, or Unavailable naming the package to install.
    [[nodiscard]] static Result<QString> findServer();

private:
    bool ping() const;
    qint64 readPid() const;
    QString holdFile() const;
    /// stop() once the start lock is held: whether one was running, and its pid, into `out`.
    Result<void> stopLocked(int timeoutMs, EmbeddedStopped &out);
    /// The start lock taken, or Unavailable naming `what` was waiting.
    Result<void> lock(QLockFile &file, const QString &what) const;

    QString m_dataDir;
    QString m_workDir;
    bool m_reused = false;
};

} // namespace flashstock
