// `flashstock-cli drill --via`: the rehearsal's buyers and payment callbacks over HTTP
// against a real flashstock-server process (random port) on a real redis-server, on both
// books, with the faults made from outside (a Redis restart as its clients see it, SCRIPT
// FLUSH, lost / duplicate / late callbacks, the server killed with -9 and started again by
// --server-command); then the wind-down and I1-I6 on the drill's own SKU. And a broken
// setup (a server on another book, a refused token) is a failure, not a pass.

#include "ChildProcess.h"
#include "Engine.h"
#include "drill/DrillSchedule.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"
#include "support/ServerProcess.h"
#include "support/TestChecks.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <csignal>

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

struct CliRun {
    int exitCode = -1;
    QJsonObject json;
    QString out; ///< stdout as printed
    QString err;
};

/// flashstock-cli with `args` on the server's book and gate (its own data dir), `--json`.
CliRun runCli(const test::ServerProcess &server, const QString &dataDir, const QStringList &args, int timeoutMs,
              const QString &book = {})
{
    QProcess p;
    p.setProcessEnvironment(server.environment()); // PGPASSWORD for a PostgreSQL book
    p.start(QStringLiteral(FLASHSTOCK_CLI_PATH),
            QStringList{u"--data-dir"_s, dataDir, u"--db"_s, book.isEmpty() ? server.bookArgument() : book,
                        u"--redis"_s, server.gateArgument(), u"--operator"_s, u"tester"_s, u"--json"_s}
                + args);
    CliRun r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = u"flashstock-cli did not finish in %1 ms: "_s.arg(timeoutMs);
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    const QByteArray out = p.readAllStandardOutput();
    r.out = QString::fromUtf8(out);
    r.json = QJsonDocument::fromJson(out).object();
    r.err += QString::fromUtf8(p.readAllStandardError()).right(4000);
    return r;
}

QString shellQuoted(const QStringList &words)
{
    QStringList out;
    for (const QString &w : words)
        out << u"'"_s + QString(w).replace(u"'"_s, u"'\\''"_s) + u"'"_s;
    return out.join(u' ');
}

/// Writes the token to a file only the owner can read; its path.
QString tokenFile(const QTemporaryDir &dir, const QString &token)
{
    const QString path = dir.filePath(u"token"_s);
    QFile f(path);
    if (f.open(QIODevice::WriteOnly)) {
        f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        f.write(token.toUtf8() + '\n');
    }
    return path;
}

/// The process id in `pidFile`; 0 if none.
qint64 readPid(const QString &pidFile)
{
    QFile f(pidFile);
    return f.open(QIODevice::ReadOnly) ? f.readAll().trimmed().toLongLong() : 0;
}

/// Stops the server the drill started again (its pid in `pidFile`), if it is not `original`.
void stopRestarted(const QString &pidFile, qint64 original)
{
    const qint64 pid = readPid(pidFile);
    if (pid <= 1 || pid == original)
        return;
    ::kill(pid_t(pid), SIGTERM);
    for (int i = 0; i < 200 && ::kill(pid_t(pid), 0) == 0; ++i)
        QThread::msleep(50);
}

/// At scope exit, if the test failed, logs the drill's whole report: QTest cuts a failure's
/// message at 1024 bytes.
auto printReportIfFailed(const QString &report)
{
    return qScopeGuard([&report] {
        if (QTest::currentTestFailed())
            qWarning().noquote() << "the drill's report:\n" << report;
    });
}

/// The state letter of process `pid`'s leader thread in /proc (R, S, Z...); 0 if none.
char leaderState(qint64 pid)
{
    QFile stat(u"/proc/%1/stat"_s.arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray line = stat.readAll();
    const qsizetype close = line.lastIndexOf(')');
    return close > 0 && close + 2 < line.size() ? line.at(close + 2) : 0;
}

} // namespace

class TestDrillVia : public QObject {
    Q_OBJECT

private slots:
    void viaServerPassesWithOutsideFaults_data() { test::addBackendRows(); }
    void viaServerPassesWithOutsideFaults();
    void serverKillBeforeTheLastBuyerHeals();
    void processIsGoneOnlyOnceItsLastThreadIs();
    void brokenSetupFails();
};

void TestDrillVia::viaServerPassesWithOutsideFaults()
{
    QFETCH(QString, backend);
    QTemporaryDir work;
    QVERIFY(work.isValid());
    const QString pidFile = work.filePath(u"server.pid"_s);
    FS_SERVED(backend, u"--pid-file"_s, pidFile);
    const QString command = shellQuoted(QStringList{test::ServerProcess::binary()} + server.arguments())
        + u" 2>>"_s + work.filePath(u"restarted.log"_s);
    const CliRun run = runCli(server, work.filePath(u"cli"_s),
                              {u"drill"_s, u"--sku"_s, u"VIA-"_s + backend, u"--stock"_s, u"100"_s, u"--buyers"_s,
                               u"400"_s, u"--concurrency"_s, u"4"_s, u"--hold-seconds"_s, u"1"_s, u"--faults"_s,
                               u"all"_s, u"--seed"_s, u"3"_s, u"--via"_s, server.baseUrl(), u"--token-file"_s,
                               tokenFile(work, token), u"--server-pid-file"_s, pidFile, u"--server-command"_s,
                               command},
                              180000);
    stopRestarted(pidFile, server.pid());
    const QString report = run.out + run.err;
    const auto printReport = printReportIfFailed(report);
    QVERIFY2(run.exitCode == 0, qPrintable(report));
    QVERIFY(run.json.value(u"passed"_s).toBool());
    QCOMPARE(run.json.value(u"via"_s).toString(), server.baseUrl());
    QCOMPARE(run.json.value(u"oversold"_s).toInteger(), 0);
    QCOMPARE(run.json.value(u"stuck"_s).toInteger(), 0);
    QCOMPARE(run.json.value(u"lost_reservations"_s).toInteger(), 0);
    QCOMPARE(run.json.value(u"lost_payments"_s).toInteger(), 0);
    for (const QJsonValue v : run.json.value(u"invariants"_s).toObject())
        QVERIFY2(v.toBool(), qPrintable(report));
    // The outside faults fired and healed; the inside ones are left out, and the report says so.
    const QJsonObject faults = run.json.value(u"faults"_s).toObject();
    for (const QString &kind : {u"lost-callback"_s, u"duplicate-callback"_s, u"late-payment"_s, u"redis-restart"_s,
                                u"script-flush"_s, u"server-kill"_s}) {
        const QJsonObject f = faults.value(kind).toObject();
        QVERIFY2(f.value(u"injected"_s).toInteger() >= 1, qPrintable(kind + u" never fired\n"_s + report));
        QVERIFY2(f.value(u"healed"_s).toInteger() == f.value(u"injected"_s).toInteger(),
                 qPrintable(kind + u" not healed\n"_s + report));
    }
    QVERIFY(!faults.contains(u"crash-after-gate"_s));
    QVERIFY(!faults.contains(u"db-error"_s));
    QVERIFY2(faults.value(u"server-kill"_s).toObject().value(u"note"_s).toString().contains(u"killed with SIGKILL"_s),
             qPrintable(report));
    const QString notes = QString::fromUtf8(QJsonDocument(run.json.value(u"notes"_s).toArray()).toJson());
    QVERIFY2(notes.contains(u"crash-after-gate left out: an inside fault"_s), qPrintable(notes));

    // The book agrees with the report: what the buyers paid for is sold, nothing is held.
    const SkuLevels levels = FS_OK(engine->book().levels(u"VIA-"_s + backend));
    QCOMPARE(levels.sold, run.json.value(u"sold"_s).toInteger());
    QCOMPARE(levels.locked, 0);
    QCOMPARE(levels.total, 100);
    QVERIFY(test::bookHolds(*engine));
}

void TestDrillVia::serverKillBeforeTheLastBuyerHeals()
{
    // A server-kill due before the last buyer: that buyer waits until the killed server is
    // gone, so the new server answers it and the fault heals. (Released before the kill, it
    // was answered by the old server or retried across the kill with its first send time,
    // and the fault stayed unhealed with nobody left to show the restart.)
    constexpr qint64 kBuyers = 30;
    DrillOptions o;
    o.buyers = kBuyers;
    o.stock = 10;
    o.faults = FS_OK(parseFaults(u"server-kill=0.05"_s));
    o.via = DrillVia{};
    o.via->killServer = [](const std::function<void()> &) -> Result<QString> { return QString(); };
    quint64 seed = 0;
    for (quint64 s = 1; s < 100000 && !seed; ++s) {
        o.seed = s;
        const DrillSchedule schedule = DrillSchedule::build(o);
        if (schedule.events.size() == 1 && schedule.events.front().beforeBuyer == kBuyers - 1)
            seed = s;
    }
    QVERIFY2(seed, "no seed puts one server-kill before the last buyer");

    QTemporaryDir work;
    QVERIFY(work.isValid());
    const QString pidFile = work.filePath(u"server.pid"_s);
    FS_SERVED(u"sqlite"_s, u"--pid-file"_s, pidFile);
    const QString command = shellQuoted(QStringList{test::ServerProcess::binary()} + server.arguments())
        + u" 2>>"_s + work.filePath(u"restarted.log"_s);
    // A descriptor the drill inherits (as from a `flock` around it): the server it starts
    // again outlives it and must not hold it.
    const QString lock = work.filePath(u"held.lock"_s);
    const int fd = ::open(QFile::encodeName(lock).constData(), O_CREAT | O_RDWR, 0600); // not O_CLOEXEC
    QVERIFY(fd >= 0);
    auto closeFd = qScopeGuard([fd] { ::close(fd); });
    const CliRun run = runCli(server, work.filePath(u"cli"_s),
                              {u"drill"_s, u"--stock"_s, QString::number(o.stock), u"--buyers"_s,
                               QString::number(kBuyers), u"--faults"_s, u"server-kill=0.05"_s, u"--seed"_s,
                               QString::number(seed), u"--via"_s, server.baseUrl(), u"--token-file"_s,
                               tokenFile(work, token), u"--server-pid-file"_s, pidFile, u"--server-command"_s,
                               command},
                              120000);
    const qint64 restarted = readPid(pidFile);
    const QStringList held = test::descriptorsOn(restarted, lock);
    stopRestarted(pidFile, server.pid());
    const QString report = run.out + run.err;
    const auto printReport = printReportIfFailed(report);
    const QJsonObject kill = run.json.value(u"faults"_s).toObject().value(u"server-kill"_s).toObject();
    QVERIFY2(kill.value(u"injected"_s).toInteger() == 1, qPrintable(report));
    QVERIFY2(kill.value(u"healed"_s).toInteger() == 1, qPrintable(report));
    QVERIFY2(run.exitCode == 0, qPrintable(report));
    QVERIFY(restarted > 0 && restarted != server.pid());
    QVERIFY2(held.isEmpty(), qPrintable(u"the restarted server holds %1 as fd %2"_s.arg(lock, held.join(u','))));
}

void TestDrillVia::processIsGoneOnlyOnceItsLastThreadIs()
{
    // A server killed with SIGKILL is, for a moment, a zombie leader whose other threads
    // still exit and still hold its descriptors (its listening socket): the server started
    // again then failed to bind its port, and the drill waited 60 s for it. Here the
    // leader exits alone (the exit system call, one thread) while a second thread waits on
    // a pipe.
    int release[2];
    QVERIFY(::pipe(release) == 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(release[1]);
        pthread_t waiter;
        const auto waitThenExit = [](void *fd) -> void * {
            char c;
            [[maybe_unused]] const ssize_t n = ::read(int(intptr_t(fd)), &c, 1);
            ::_exit(0);
        };
        if (::pthread_create(&waiter, nullptr, waitThenExit, reinterpret_cast<void *>(intptr_t(release[0]))) != 0)
            ::_exit(1);
        ::syscall(SYS_exit, 0); // this thread only, no unwinding through the test's frames
    }
    QVERIFY(child > 0);
    ::close(release[0]);
    auto reap = qScopeGuard([&] {
        ::close(release[1]);
        ::waitpid(child, nullptr, 0);
    });
    QTRY_VERIFY_WITH_TIMEOUT(leaderState(child) == 'Z', 10000);
    QVERIFY(!processGone(child));
    QCOMPARE(::write(release[1], "x", 1), ssize_t(1));
    QTRY_VERIFY_WITH_TIMEOUT(processGone(child), 10000); // a zombie, not reaped yet
    QCOMPARE(leaderState(child), 'Z');
}

void TestDrillVia::brokenSetupFails()
{
    // A server on another book, and a token the server does not know: each is a failure
    // named before any buyer is sent, never a drill that passes on nothing.
    QTemporaryDir work;
    QVERIFY(work.isValid());
    FS_SERVED(u"sqlite"_s);
    const QStringList drill{u"drill"_s, u"--stock"_s, u"10"_s, u"--buyers"_s, u"20"_s, u"--faults"_s, u"none"_s,
                            u"--via"_s, server.baseUrl(), u"--token-file"_s};

    const QString otherBook = u"sqlite:///"_s + work.filePath(u"other.db"_s);
    const CliRun elsewhere = runCli(server, work.filePath(u"cli1"_s), drill + QStringList{tokenFile(work, token)},
                                    60000, otherBook);
    QVERIFY2(elsewhere.exitCode != 0, qPrintable(elsewhere.err));
    const QString message = elsewhere.json.value(u"error"_s).toObject().value(u"message"_s).toString();
    QVERIFY2(message.contains(u"runs on another book"_s), qPrintable(message + elsewhere.err));

    QTemporaryDir wrong;
    QVERIFY(wrong.isValid());
    const CliRun refused = runCli(server, work.filePath(u"cli2"_s),
                                  drill + QStringList{tokenFile(wrong, u"fs_not-a-token"_s)}, 60000);
    QVERIFY2(refused.exitCode != 0, qPrintable(refused.err));
    const QString why = refused.json.value(u"error"_s).toObject().value(u"message"_s).toString();
    QVERIFY2(why.contains(u"refused the token"_s), qPrintable(why + refused.err));
}

QTEST_GUILESS_MAIN(TestDrillVia)
#include "tst_drill_via.moc"
