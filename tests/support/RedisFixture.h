#pragma once

#include "gate/RedisConnection.h"
#include "gate/RedisUrl.h"
#include "support/TestChecks.h"

#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

namespace flashstock {

/// A throwaway redis-server for one test: its own temporary dir, a free TCP port on
/// 127.0.0.1 and a unix socket, no persistence (`--save '' --appendonly no`), run in the
/// foreground under QProcess. Stopped in the destructor. Use from the thread that made it.
///
/// In a test function, begin with `FLASHSTOCK_REQUIRE_REDIS_SERVER();`: without
/// redis-server on PATH it fails under CI, else skips (test::missingServerFails).
class RedisFixture {
public:
    /// `extraArgs` go after ours (e.g. cluster options). `clusterPort` picks a port below
    /// 55535 whose bus port (+10000) is free too.
    explicit RedisFixture(QStringList extraArgs = {}, bool clusterPort = false);
    ~RedisFixture();
    RedisFixture(const RedisFixture &) = delete;
    RedisFixture &operator=(const RedisFixture &) = delete;

    /// True if `redis-server` is on PATH.
    static bool serverInstalled();

    /// Starts the server and waits until it answers PING (up to 5 s). False (with
    /// errorString()) if it does not come up.
    bool start();
    /// Graceful stop (SIGTERM) and wait.
    void stop();
    /// SIGKILL, as a crash; the port is free again when this returns.
    void kill();
    /// SIGSTOP: the server stops answering and replicating, as a machine that hangs.
    void freeze();
    /// SIGCONT after freeze().
    void thaw();
    /// start() again on the same port and socket (data is gone: no persistence).
    bool restart() { return start(); }
    /// True while the process runs.
    bool isRunning() const;

    /// TCP URL, with the given command timeout (connect timeout 300 ms).
    RedisUrl url(int timeoutMs = 1000) const;
    /// Unix-socket URL.
    RedisUrl unixUrl() const;
    int port() const { return m_port; }
    QString socketPath() const;
    QString dir() const { return m_dir.path(); }
    QString errorString() const { return m_error; }

    /// Runs one command on a private connection (for test setup and checks).
    Result<RedisValue> command(const QList<QByteArray> &argv);

private:
    static int freePort(bool clusterPort);

    QTemporaryDir m_dir;
    QStringList m_extraArgs;
    int m_port = 0;
    std::unique_ptr<QProcess> m_process;
    std::unique_ptr<RedisConnection> m_admin;
    QString m_error;
};

} // namespace flashstock

/// Skips (developer machine) or fails (CI, test::missingServerFails) the current test if
/// redis-server is missing.
#define FLASHSTOCK_REQUIRE_REDIS_SERVER() FS_REQUIRE(flashstock::RedisFixture::serverInstalled(), "redis-server is not on PATH")
