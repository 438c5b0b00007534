// The gate's connection to Redis against real servers: URL parsing, reconnect after an
// idle close, unix socket / db / AUTH, outages (hung and killed server), the embedded server.
#include "gate/EmbeddedRedis.h"
#include "gate/Gate.h"
#include "support/RedisFixture.h"
#include "support/TestChecks.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSet>
#include <QTest>
#include <QTemporaryDir>
#include <QThread>

#include <csignal>

#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace flashstock;

class TestGateConnection : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<RedisFixture> m_redis;
    std::unique_ptr<Gate> m_gate;

    /// The gate's available of `sku`; a failed call fails the test.
    qint64 available(const QString &sku) { return FS_OK(m_gate->available(sku)); }

private slots:
    void initTestCase()
    {
        FLASHSTOCK_REQUIRE_REDIS_SERVER();
        m_redis = std::make_unique<RedisFixture>();
        QVERIFY2(m_redis->start(), qPrintable(m_redis->errorString()));
    }
    void init()
    {
        FS_VERIFY_OK(m_redis->command({"FLUSHALL"}));
        FS_VERIFY_OK(m_redis->command({"CONFIG", "SET", "timeout", "0"}));
        m_gate = std::make_unique<Gate>(m_redis->url());
        FS_VERIFY_OK(m_gate->connect());
    }
    void cleanup() { m_gate.reset(); }

    void redisUrl_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("shown");
        QTest::newRow("tcp") << u"redis://127.0.0.1:6380"_s << true << u"redis://127.0.0.1:6380"_s;
        QTest::newRow("tcp default port") << u"redis://cache"_s << true << u"redis://cache:6379"_s;
        QTest::newRow("password db") << u"redis://:s3cret@h:1/2"_s << true << u"redis://:***@h:1/2"_s;
        QTest::newRow("user") << u"redis://app:pw@h:1"_s << true << u"redis://app:***@h:1"_s;
        QTest::newRow("timeouts") << u"redis://h:1?connect_timeout_ms=50&timeout_ms=70"_s << true
                                  << u"redis://h:1?connect_timeout_ms=50&timeout_ms=70"_s;
        QTest::newRow("unix") << u"unix:///run/x/redis.sock"_s << true << u"unix:///run/x/redis.sock"_s;
        QTest::newRow("none") << u"none"_s << true << u"none"_s;
        QTest::newRow("wait") << u"redis://h:1?wait=1"_s << true << u"redis://h:1?wait=1"_s;
        QTest::newRow("cluster") << u"redis-cluster://10.0.0.1:7000,10.0.0.2:7001,node3"_s << true
                                 << u"redis-cluster://10.0.0.1:7000,10.0.0.2:7001,node3:6379"_s;
        QTest::newRow("cluster password") << u"redis-cluster://:s3cret@h1:7000,h2:7001?wait=1&timeout_ms=300"_s << true
                                          << u"redis-cluster://:***@h1:7000,h2:7001?timeout_ms=300&wait=1"_s;
        QTest::newRow("cluster user") << u"redis-cluster://app:s%40cret@h1:7000"_s << true
                                      << u"redis-cluster://app:***@h1:7000"_s;
        QTest::newRow("cluster ipv6") << u"redis-cluster://[::1]:7000,[fe80::1]:7001"_s << true
                                      << u"redis-cluster://[::1]:7000,[fe80::1]:7001"_s;
        QTest::newRow("cluster no seed") << u"redis-cluster://"_s << false << QString();
        QTest::newRow("cluster empty seed") << u"redis-cluster://:s3cret@h1:7000,,h2:1"_s << false << QString();
        QTest::newRow("cluster bad port") << u"redis-cluster://:s3cret@h1:70000"_s << false << QString();
        QTest::newRow("cluster db") << u"redis-cluster://:s3cret@h1:7000/1"_s << false << QString();
        QTest::newRow("cluster user without password") << u"redis-cluster://app@h1:7000"_s << false << QString();
        QTest::newRow("cluster unknown option") << u"redis-cluster://:s3cret@h1:7000?db=1"_s << false << QString();
        QTest::newRow("wait out of range") << u"redis-cluster://:s3cret@h1:7000?wait=17"_s << false << QString();
        QTest::newRow("no host") << u"redis://:1"_s << false << QString();
        QTest::newRow("bad port") << u"redis://h:99999"_s << false << QString();
        QTest::newRow("bad db") << u"redis://h:1/x"_s << false << QString();
        QTest::newRow("scheme") << u"http://h:1"_s << false << QString();
        QTest::newRow("relative unix") << u"unix://redis.sock"_s << false << QString();
        QTest::newRow("unknown option") << u"redis://h:1?fast=1"_s << false << QString();
        QTest::newRow("zero timeout") << u"redis://h:1?timeout_ms=0"_s << false << QString();
        QTest::newRow("garbage") << u"not a url"_s << false << QString();
        QTest::newRow("empty") << QString() << false << QString();
    }
    void redisUrl()
    {
        QFETCH(QString, text);
        QFETCH(bool, ok);
        QFETCH(QString, shown);
        auto url = RedisUrl::parse(text);
        QCOMPARE(url.has_value(), ok);
        if (ok) {
            QCOMPARE(url->toDisplayString(), shown);
            auto again = RedisUrl::parse(url->toString());
            FS_VERIFY_OK(again);
            QCOMPARE(again->password, url->password);
        } else {
            QCOMPARE(url.error().code, ErrorCode::InvalidArgument);
            QCOMPARE(url.error().field, u"redis"_s);
            QVERIFY2(!url.error().message.contains(u"s3cret"_s), qPrintable(url.error().message));
        }
        QVERIFY(!RedisUrl::parse(u"redis://:s3cret@h:99999"_s).error().message.contains(u"s3cret"_s));
    }

    void clusterUrlNodes()
    {
        auto url = RedisUrl::parse(u"redis-cluster://:pw@h1:7000,h2:7001?timeout_ms=300&wait=2"_s);
        FS_VERIFY_OK(url);
        QVERIFY(url->isCluster());
        QCOMPARE(url->seeds.size(), 2);
        QCOMPARE(url->seeds[1].toString(), u"h2:7001"_s);
        const RedisUrl node = url->node(url->seeds[1]);
        QCOMPARE(node.kind, RedisUrl::Kind::Tcp);
        QCOMPARE(node.toDisplayString(), u"redis://:***@h2:7001?timeout_ms=300&wait=2"_s);
        QCOMPARE(node.password, u"pw"_s);
        QCOMPARE(url->waitTimeoutMs(), 150);

        // A cluster URL on a server that is not a cluster node says so.
        RedisUrl notCluster = RedisUrl::cluster({{u"127.0.0.1"_s, m_redis->port()}});
        Gate gate(notCluster);
        auto r = gate.connect();
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
        QVERIFY2(r.error().message.contains(u"not a Redis Cluster node"_s), qPrintable(r.error().message));
    }

    void waitWithoutReplicasIsUnavailable()
    {
        RedisUrl url = m_redis->url(400);
        url.waitReplicas = 1;
        Gate gate(url);
        QCOMPARE(FS_OK(m_gate->load(u"W"_s, 5, false)), 5);
        QElapsedTimer timer;
        timer.start();
        auto r = gate.reserve(u"W"_s, u"o1"_s, {}, 1);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Unavailable);
        QVERIFY2(r.error().message.contains(u"confirmed by 0 of 1 replicas"_s), qPrintable(r.error().message));
        QVERIFY(timer.elapsed() >= 150);
        QCOMPARE(available(u"W"_s), 4); // the write stands: an unknown outcome, healed by the reconciler
        FS_VERIFY_OK(gate.available(u"W"_s)); // reads do not wait
    }

    void idleConnectionClosedByServerReconnects()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        QCOMPARE(m_gate->connectCount(), 1);
        FS_VERIFY_OK(m_redis->command({"CONFIG", "SET", "timeout", "1"}));
        QThread::msleep(2200);
        const auto r = m_gate->reserve(u"A"_s, u"o1"_s, {}, 1);
        QVERIFY2(r.has_value(), qPrintable(r.error().message));
        QCOMPARE(r->code, GateCode::Reserved);
        QCOMPARE(m_gate->connectCount(), 2); // the closed connection was replaced
        FS_VERIFY_OK(m_redis->command({"CONFIG", "SET", "timeout", "0"}));
    }

    void unixSocketDbAndAuth()
    {
        RedisUrl url = m_redis->unixUrl();
        url.db = 3;
        Gate onDb3(url);
        FS_VERIFY_OK(onDb3.load(u"U"_s, 7, false));
        QCOMPARE(FS_OK(onDb3.available(u"U"_s)), 7);
        QCOMPARE(available(u"U"_s), -1); // db 0 has no such key

        FS_VERIFY_OK(m_redis->command({"CONFIG", "SET", "requirepass", "pw1"}));
        RedisUrl authed = m_redis->url();
        authed.password = u"pw1"_s;
        Gate withPassword(authed);
        FS_VERIFY_OK(withPassword.load(u"P"_s, 1, false));
        authed.password = u"wrong"_s;
        Gate wrong(authed);
        // A wrong password is an authentication failure (not bad input), and so is none
        // given to a server that wants one; neither shows the password.
        const auto refused = wrong.connect();
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Unavailable);
        QVERIFY2(refused.error().message.contains(u"authentication failed"_s), qPrintable(refused.error().message));
        QVERIFY(!refused.error().message.contains(u"wrong"_s));
        authed.password.clear();
        Gate none(authed);
        const auto unauthenticated = none.load(u"P"_s, 1, false);
        QVERIFY(!unauthenticated);
        QCOMPARE(unauthenticated.error().code, ErrorCode::Unavailable);
        QVERIFY2(unauthenticated.error().message.contains(u"authentication failed"_s),
                 qPrintable(unauthenticated.error().message));
        RedisConnection admin(FS_OK(RedisUrl::parse(u"redis://:pw1@127.0.0.1:%1"_s.arg(m_redis->port()))));
        FS_VERIFY_OK(admin.command({"CONFIG", "SET", "requirepass", ""}));
    }

    void outageAnswersUnavailableInTimeAndResumes()
    {
        RedisFixture redis;
        QVERIFY2(redis.start(), qPrintable(redis.errorString()));
        Gate gate(redis.url(400));
        FS_VERIFY_OK(gate.load(u"K"_s, 1000, false));
        QSet<QString> tokens;
        for (int i = 0; i < 50; ++i)
            tokens.insert(FS_OK(gate.reserve(u"K"_s, u"before%1"_s.arg(i), {}, 1)).token);

        // A server that hangs (stopped, socket open): the command timeout answers.
        const QByteArray info = FS_OK(redis.command({"INFO", "server"})).str;
        const qint64 serverPid = QRegularExpression(u"process_id:(\\d+)"_s)
                                     .match(QString::fromUtf8(info)).captured(1).toLongLong();
        QVERIFY(serverPid > 0);
        ::kill(pid_t(serverPid), SIGSTOP);
        QElapsedTimer timer;
        timer.start();
        auto hung = gate.reserve(u"K"_s, u"hung"_s, {}, 1);
        const qint64 hungMs = timer.elapsed();
        ::kill(pid_t(serverPid), SIGCONT);
        QVERIFY(!hung);
        QCOMPARE(hung.error().code, ErrorCode::Unavailable);
        QVERIFY2(hungMs >= 350 && hungMs < 1500, qPrintable(QString::number(hungMs)));
        // The hung reserve may have run after SIGCONT: it is idempotent, repeat it.
        FS_VERIFY_OK(gate.reserve(u"K"_s, u"hung"_s, {}, 1));

        redis.kill();
        for (int i = 0; i < 3; ++i) {
            timer.restart();
            auto down = gate.reserve(u"K"_s, u"during%1"_s.arg(i), {}, 1);
            QVERIFY(!down);
            QCOMPARE(down.error().code, ErrorCode::Unavailable);
            QVERIFY2(timer.elapsed() < 800, qPrintable(QString::number(timer.elapsed())));
            QVERIFY(!gate.health().reachable);
        }
        QVERIFY2(redis.restart(), qPrintable(redis.errorString()));
        // Service resumes by itself; the data went with the crash (no persistence).
        auto after = gate.reserve(u"K"_s, u"after0"_s, {}, 1);
        QVERIFY2(after.has_value(), qPrintable(after.error().message));
        QCOMPARE(after->code, GateCode::NoStockKey);
        FS_VERIFY_OK(gate.load(u"K"_s, 1000, false));
        for (int i = 0; i < 50; ++i) {
            auto r = gate.reserve(u"K"_s, u"after%1"_s.arg(i), {}, 1);
            QVERIFY(r && r->code == GateCode::Reserved);
            QVERIFY2(!tokens.contains(r->token), qPrintable(r->token)); // unique across restart
            tokens.insert(r->token);
        }
        QCOMPARE(tokens.size(), 100);
        QCOMPARE(FS_OK(gate.available(u"K"_s)), 950);
    }

    void embeddedRedisNeverStartsASecondServer()
    {
        // A private server that is alive but does not answer (stopped, stalled) must not
        // get a second server started on its socket and files: start() refuses, status()
        // says so, stop() signals it.
        QTemporaryDir tmp;
        const QString dataDir = tmp.filePath(u"d"_s);
        EmbeddedRedis embedded(dataDir);
        FS_VERIFY_OK(embedded.start());
        const qint64 pid = embedded.status().pid;
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid_t(pid), SIGSTOP), 0);
        auto again = EmbeddedRedis(dataDir).start();
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::Unavailable);
        QVERIFY2(again.error().message.contains(QString::number(pid)), qPrintable(again.error().message));
        const EmbeddedRedisStatus s = embedded.status();
        QVERIFY(!s.running);
        QVERIFY(s.processAlive);
        auto stopped = embedded.stop();
        QVERIFY(stopped && stopped->wasRunning && stopped->pid == pid);
        QVERIFY(!embedded.status().processAlive);
    }

    void embeddedRedisInheritsNoDescriptors()
    {
        // The daemonized redis-server outlives whoever started it: it must not keep a
        // descriptor of theirs open (a lock a parent's `flock` handed down, a socket).
        QTemporaryDir tmp;
        const QString lock = tmp.filePath(u"held.lock"_s);
        const int fd = ::open(QFile::encodeName(lock).constData(), O_CREAT | O_RDWR, 0600); // not O_CLOEXEC
        QVERIFY(fd >= 0);
        auto closeFd = qScopeGuard([fd] { ::close(fd); });
        EmbeddedRedis embedded(tmp.filePath(u"d"_s));
        FS_VERIFY_OK(embedded.start());
        auto stop = qScopeGuard([&] { (void)embedded.stop(); });
        const qint64 pid = embedded.status().pid;
        QVERIFY(pid > 0);
        const QStringList held = test::descriptorsOn(pid, lock);
        QVERIFY2(held.isEmpty(), qPrintable(u"redis-server holds %1 as fd %2"_s.arg(lock, held.join(u','))));
    }

    void embeddedRedisStartsReusesStops()
    {
        QTemporaryDir tmp(QDir::tempPath() + u"/fsemb-XXXXXX"_s);
        const QString dataDir = tmp.path() + u"/data"_s;
        EmbeddedRedis embedded(dataDir);
        QVERIFY(!embedded.status().running);
        auto url = embedded.start();
        QVERIFY2(url.has_value(), qPrintable(url.error().message));
        QVERIFY(!embedded.wasReused());
        QCOMPARE(url->kind, RedisUrl::Kind::Unix);
        QCOMPARE(url->socketPath, dataDir + u"/redis.sock"_s);
        QCOMPARE(QFileInfo(dataDir).permissions() & 0x0077, QFileDevice::Permissions{});
        QCOMPARE(QFileInfo(dataDir + u"/redis"_s).permissions() & 0x0077, QFileDevice::Permissions{});
        const EmbeddedRedisStatus st = embedded.status();
        QVERIFY(st.running);
        QVERIFY(st.pid > 0);
        {
            Gate gate(*url);
            QCOMPARE(FS_OK(gate.load(u"E"_s, 3, false)), 3);
            RedisConnection c(*url);
            QCOMPARE(FS_OK(c.command({"CONFIG", "GET", "appendonly"})).elements.value(1).str, "yes");
            QCOMPARE(FS_OK(c.command({"CONFIG", "GET", "port"})).elements.value(1).str, "0");
        }
        EmbeddedRedis again(dataDir);
        FS_VERIFY_OK(again.start());
        QVERIFY(again.wasReused());
        QCOMPARE(again.status().pid, st.pid);
        const EmbeddedStopped stopped = FS_OK(again.stop());
        QVERIFY(stopped.wasRunning && !stopped.held);
        QCOMPARE(stopped.pid, st.pid);
        QVERIFY(!embedded.status().running);
        QCOMPARE(FS_OK(embedded.stop()).wasRunning, false);
        // Held down: start() refuses (the gate unreachable for every command) until a start
        // that lifts the hold.
        QVERIFY(FS_OK(embedded.stop(5000, u"maintainer"_s)).held);
        const auto refused = embedded.start();
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Unavailable);
        QVERIFY2(refused.error().message.contains(u"held down"_s) && refused.error().message.contains(u"maintainer"_s),
                 qPrintable(refused.error().message));
        QVERIFY(embedded.status().held && !embedded.status().running);
        FS_VERIFY_OK(embedded.start(EmbeddedRedis::Hold::Release));
        QVERIFY(!embedded.status().held);
        // Append-only file on: a restart keeps the gate's keys.
        FS_VERIFY_OK(embedded.start());
        QCOMPARE(FS_OK(Gate(embedded.url()).available(u"E"_s)), 3);
        QVERIFY(FS_OK(embedded.stop()).wasRunning);

        const QByteArray path = qgetenv("PATH");
        qputenv("PATH", "/nonexistent");
        auto missing = EmbeddedRedis(tmp.path() + u"/other"_s).start();
        qputenv("PATH", path);
        QVERIFY(!missing);
        QCOMPARE(missing.error().code, ErrorCode::Unavailable);
        QVERIFY2(missing.error().message.contains(u"redis-server is not installed"_s),
                 qPrintable(missing.error().message));
    }
};

QTEST_GUILESS_MAIN(TestGateConnection)
#include "tst_gate_connection.moc"
