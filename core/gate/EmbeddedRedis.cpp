#include "gate/EmbeddedRedis.h"

#include "ChildProcess.h"
#include "ContractJson.h"
#include "gate/RedisConnection.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QDateTime>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QProcess>
#include <QStandardPaths>
#include <QThread>

#include <csignal>
#include <sys/types.h>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr QFileDevice::Permissions kOwnerOnly =
    QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner;

bool processAlive(qint64 pid)
{
    return pid > 0 && ::kill(pid_t(pid), 0) == 0;
}

/// The pid is alive and is a redis-server (not a pid reused by another program).
bool redisAlive(qint64 pid)
{
    if (!processAlive(pid))
        return false;
    QFile comm(u"/proc/%1/comm"_s.arg(pid));
    return !comm.open(QIODevice::ReadOnly) || comm.readAll().startsWith("redis-server");
}

QString lastLines(const QString &path, int lines)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QStringList all = QString::fromUtf8(f.readAll()).split(u'\n', Qt::SkipEmptyParts);
    return all.mid(qMax(0, all.size() - lines)).join(u'\n');
}

} // namespace

EmbeddedRedis::EmbeddedRedis(QString dataDir)
    : m_dataDir(QDir::cleanPath(QDir(dataDir).absolutePath()))
    , m_workDir(m_dataDir + u"/redis"_s)
{
}

QString EmbeddedRedis::socketPath() const { return m_dataDir + u"/redis.sock"_s; }

RedisUrl EmbeddedRedis::url() const
{
    RedisUrl u = RedisUrl::unixSocket(socketPath());
    u.connectTimeoutMs = 200;
    return u;
}

Result<QString> EmbeddedRedis::findServer()
{
    const QString exe = QStandardPaths::findExecutable(u"redis-server"_s);
    if (exe.isEmpty())
        return fail(ErrorCode::Unavailable,
                    u"redis-server is not installed (not found on PATH): install the "
                    "redis-server package, or pass --redis URL for a running server, or "
                    "--redis none to run book-only"_s,
                    u"redis"_s);
    return exe;
}

bool EmbeddedRedis::ping() const
{
    if (!QFileInfo::exists(socketPath()))
        return false;
    RedisConnection conn(url());
    auto r = conn.command({QByteArrayLiteral("PING")});
    return r && r->type == RedisValue::Type::Status && r->str == "PONG";
}

qint64 EmbeddedRedis::readPid() const
{
    QFile f(m_workDir + u"/redis.pid"_s);
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    return f.readAll().trimmed().toLongLong();
}

QString EmbeddedRedis::holdFile() const { return m_workDir + u"/hold"_s; }

Result<void> EmbeddedRedis::lock(QLockFile &file, const QString &what) const
{
    if (!file.tryLock(10000))
        return fail(ErrorCode::Unavailable,
                    u"%1: another process is starting or stopping the embedded redis-server in %2"_s.arg(what, m_workDir),
                    u"redis"_s);
    return {};
}

Result<RedisUrl> EmbeddedRedis::start(Hold hold)
{
    m_reused = false;
    if (socketPath().toLocal8Bit().size() > 107)
        return fail(ErrorCode::InvalidArgument,
                    u"the data dir path is too long for a unix socket (%1 is over 107 bytes); "
                    "use a shorter --data-dir or --redis URL"_s.arg(socketPath()),
                    u"data-dir"_s);
    const bool created = !QFileInfo::exists(m_dataDir);
    if (!QDir().mkpath(m_workDir))
        return fail(ErrorCode::InvalidArgument, u"cannot create %1"_s.arg(m_workDir), u"data-dir"_s);
    if (created)
        QFile::setPermissions(m_dataDir, kOwnerOnly);
    QFile::setPermissions(m_workDir, kOwnerOnly);

    // Two commands starting at once must not start two servers on one socket, nor one
    // start a server that a stop in progress is taking down.
    QLockFile startLock(m_workDir + u"/start.lock"_s);
    if (auto locked = lock(startLock, u"not started"_s); !locked)
        return std::unexpected(locked.error());
    if (hold == Hold::Release) {
        if (QFile::exists(holdFile()) && !QFile::remove(holdFile()))
            return fail(ErrorCode::Unavailable, u"cannot lift the hold: %1 cannot be removed"_s.arg(holdFile()),
                        u"redis"_s);
    } else if (const EmbeddedRedisStatus s = status(); s.held) {
        return fail(ErrorCode::Unavailable,
                    u"the private redis-server of %1 is held down for maintenance (by %2 since %3, embedded stop "
                    u"--hold); it is not started until embedded start lifts the hold"_s
                        .arg(m_dataDir, s.heldBy,
                             isoTime(s.heldSinceMs)),
                    u"redis"_s);
    }
    if (ping()) {
        m_reused = true;
        return url();
    }
    // A server that is alive but slow (a fork, an fsync stall, SIGSTOP) must not get a
    // second server started beside it on the same files: wait a little, then refuse.
    if (const qint64 pid = readPid(); redisAlive(pid)) {
        const QDeadlineTimer patience(3000);
        while (!patience.hasExpired()) {
            if (ping()) {
                m_reused = true;
                return url();
            }
            QThread::msleep(50);
        }
        return fail(ErrorCode::Unavailable,
                    u"the private redis-server (pid %1) is running but does not answer on %2; not starting a second "
                    u"one on its files. Check it (log: %3), or stop it: kill %1"_s.arg(pid).arg(socketPath(),
                                                                                       m_workDir + u"/redis.log"_s),
                    u"redis"_s);
    }
    auto exe = findServer();
    if (!exe)
        return std::unexpected(exe.error());

    QFile::remove(socketPath()); // stale socket of a server that died
    const QString logFile = m_workDir + u"/redis.log"_s;
    const QStringList args{
        u"--port"_s, u"0"_s,
        u"--unixsocket"_s, socketPath(),
        u"--unixsocketperm"_s, u"700"_s,
        u"--dir"_s, m_workDir,
        u"--appendonly"_s, u"yes"_s,
        u"--save"_s, QString(),
        u"--daemonize"_s, u"yes"_s,
        u"--pidfile"_s, m_workDir + u"/redis.pid"_s,
        u"--logfile"_s, logFile,
    };
    QProcess proc;
    proc.setProcessChannelMode(QProcess::MergedChannels);
    closeDescriptorsOnExec(); // it daemonizes and outlives this process
    proc.start(*exe, args);
    if (!proc.waitForFinished(10000) || proc.exitStatus() != QProcess::NormalExit
        || proc.exitCode() != 0)
        return fail(ErrorCode::Unavailable,
                    u"redis-server did not start in %1: %2 %3"_s.arg(
                        m_workDir, QString::fromLocal8Bit(proc.readAll()).trimmed(),
                        lastLines(logFile, 5)),
                    u"redis"_s);

    const QDeadlineTimer deadline(5000);
    while (!deadline.hasExpired()) {
        if (ping())
            return url();
        QThread::msleep(10);
    }
    return fail(ErrorCode::Unavailable,
                u"redis-server in %1 does not answer on %2 after 5 s; its log says: %3"_s.arg(
                    m_workDir, socketPath(), lastLines(logFile, 5)),
                u"redis"_s);
}

EmbeddedRedisStatus EmbeddedRedis::status() const
{
    EmbeddedRedisStatus s;
    s.running = ping();
    s.pid = readPid();
    s.processAlive = redisAlive(s.pid);
    s.socketPath = socketPath();
    s.workDir = m_workDir;
    s.logFile = m_workDir + u"/redis.log"_s;
    s.url = url().toString();
    QFile hold(holdFile());
    if (hold.open(QIODevice::ReadOnly)) {
        const QJsonObject o = QJsonDocument::fromJson(hold.readAll()).object();
        s.held = true;
        s.heldBy = o.value(u"by"_s).toString();
        s.heldSinceMs = qint64(o.value(u"since_ms"_s).toDouble());
    }
    return s;
}

Result<EmbeddedStopped> EmbeddedRedis::stop(int timeoutMs, const QString &holdBy)
{
    if (holdBy.isEmpty() && !QFileInfo::exists(m_workDir))
        return EmbeddedStopped{}; // never started here
    if (!QDir().mkpath(m_workDir))
        return fail(ErrorCode::Unavailable, u"cannot create %1"_s.arg(m_workDir), u"data-dir"_s);
    QLockFile startLock(m_workDir + u"/start.lock"_s);
    if (auto locked = lock(startLock, u"not stopped"_s); !locked)
        return std::unexpected(locked.error());
    EmbeddedStopped out;
    if (!holdBy.isEmpty()) {
        // Before the server goes down, so that no command sees it down and not held.
        QFile hold(holdFile());
        const QByteArray record = QJsonDocument(QJsonObject{{u"by"_s, holdBy},
                                                            {u"since_ms"_s, QDateTime::currentMSecsSinceEpoch()}})
                                      .toJson(QJsonDocument::Compact);
        if (!hold.open(QIODevice::WriteOnly | QIODevice::Truncate) || hold.write(record) != record.size()
            || !hold.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner))
            return fail(ErrorCode::Unavailable, u"cannot write the hold %1: %2"_s.arg(holdFile(), hold.errorString()),
                        u"redis"_s);
        out.held = true;
    }
    if (auto stopped = stopLocked(timeoutMs, out); !stopped)
        return std::unexpected(stopped.error());
    return out;
}

Result<EmbeddedStopped> EmbeddedRedis::stopIfUnused(int timeoutMs)
{
    if (!QFileInfo::exists(m_workDir))
        return EmbeddedStopped{}; // never started here
    QLockFile startLock(m_workDir + u"/start.lock"_s);
    if (auto locked = lock(startLock, u"not stopped"_s); !locked)
        return std::unexpected(locked.error());
    EmbeddedStopped out;
    if (ping()) {
        RedisConnection conn(url());
        auto clients = conn.command({QByteArrayLiteral("CLIENT"), QByteArrayLiteral("LIST")});
        if (!clients || clients->isError())
            return fail(ErrorCode::Unavailable,
                        u"left running: cannot tell whether others use the redis-server on %1: %2"_s.arg(
                            socketPath(), clients ? QString::fromUtf8(clients->str) : clients.error().message),
                        u"redis"_s);
        // One line per connection, this one included.
        out.otherClients = qMax<qint64>(0, clients->str.trimmed().split('\n').size() - 1);
        if (out.otherClients > 0)
            return out;
    }
    if (auto stopped = stopLocked(timeoutMs, out); !stopped)
        return std::unexpected(stopped.error());
    return out;
}

Result<void> EmbeddedRedis::stopLocked(int timeoutMs, EmbeddedStopped &out)
{
    const qint64 pid = readPid();
    const auto stoppedNow = [&out, pid]() -> Result<void> {
        out.wasRunning = true;
        out.pid = pid;
        return {};
    };
    if (!ping()) {
        if (!redisAlive(pid))
            return {};
        // Alive but not answering: ask it by signal (SIGTERM saves and exits; SIGCONT in
        // case it was stopped).
        ::kill(pid_t(pid), SIGTERM);
        ::kill(pid_t(pid), SIGCONT);
        const QDeadlineTimer deadline(timeoutMs);
        while (!deadline.hasExpired()) {
            if (!processAlive(pid))
                return stoppedNow();
            QThread::msleep(10);
        }
        return fail(ErrorCode::Unavailable,
                    u"redis-server (pid %1) does not answer and did not stop within %2 ms"_s.arg(pid).arg(timeoutMs),
                    u"redis"_s);
    }
    {
        RedisConnection conn(url());
        // The server closes the connection while shutting down: no reply is the good case.
        auto r = conn.command({QByteArrayLiteral("SHUTDOWN")});
        if (r && r->isError())
            return fail(ErrorCode::Unavailable,
                        u"redis-server on %1 refused SHUTDOWN: %2"_s.arg(socketPath(),
                                                                         QString::fromUtf8(r->str)),
                        u"redis"_s);
    }
    // The process asked to stop is what is waited for (its pid file goes first); under the
    // start lock no command brings another up meanwhile.
    const QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (pid > 0 ? !processAlive(pid) : !ping())
            return stoppedNow();
        QThread::msleep(10);
    }
    return fail(ErrorCode::Unavailable,
                u"redis-server (pid %1) on %2 did not stop within %3 ms"_s.arg(QString::number(pid), socketPath(),
                                                                              QString::number(timeoutMs)),
                u"redis"_s);
}

} // namespace flashstock
