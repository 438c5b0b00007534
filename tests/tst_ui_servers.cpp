// The console knows the servers: two real flashstock-server processes on a SQLite book
// (book-only), and the console's window on the same book. Their heartbeats name them; each
// is asked for /readyz and, with a read token, /metrics; one that is killed turns red within
// its heartbeat period plus 5 s, and the status bar names it; one started again on its port
// replaces it. With FLASHSTOCK_SHOT_DIR set, the Servers tab is saved as PNG there.

#include "ConsoleSession.h"
#include "ConsoleText.h"
#include "Engine.h"
#include "EngineWorker.h"
#include "MainWindow.h"
#include "ServerMonitor.h"
#include "ServersView.h"
#include "models/ModelRoles.h"
#include "models/ServerListModel.h"
#include "support/ServerProcess.h"
#include "support/TestChecks.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QTabWidget>
#include <QtTest>

#include <csignal>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// The server of `monitor` listening on `address`, or nullptr.
const ServerStatus *serverAt(const ServerMonitor &monitor, const QString &address, qint64 pid = 0)
{
    for (const ServerStatus &s : monitor.servers())
        if (s.address == address && (pid == 0 || s.beat.pid() == pid))
            return &s;
    return nullptr;
}

QString addressOf(const test::ServerProcess &server)
{
    return u"127.0.0.1:%1"_s.arg(server.port());
}

} // namespace

class TestUiServers : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { std::signal(SIGPIPE, SIG_IGN); }
    void requestTotals_data();
    void requestTotals();
    void stoppedServerTurnsRed();
    void loopbackOfAnotherHostIsNotAsked();
};

void TestUiServers::requestTotals_data()
{
    QTest::addColumn<QByteArray>("metrics");
    QTest::addColumn<bool>("found");
    QTest::addColumn<double>("requests");
    QTest::addColumn<double>("errors");
    const QByteArray exposition =
        "# HELP flashstock_http_requests_total HTTP requests answered\n"
        "# TYPE flashstock_http_requests_total counter\n"
        "flashstock_http_requests_total{result=\"reserved\",route=\"reserve\",status=\"200\"} 40\n"
        "flashstock_http_requests_total{result=\"gate_unavailable\",route=\"reserve\",status=\"503\"} 3\n"
        "flashstock_http_requests_total{result=\"unauthorized\",route=\"metrics\",status=\"401\"} 7\n"
        "flashstock_http_requests_total{result=\"ready\",route=\"readyz\",status=\"200\"} 12\n"
        "flashstock_http_requests_total{result=\"internal\",route=\"metrics\",status=\"500\"} 1\n"
        "flashstock_http_requests_total{result=\"sku\",route=\"sku\",status=\"200\"} 5 1733220000000\n"
        "flashstock_http_request_duration_seconds_count{route=\"reserve\"} 43\n";
    QTest::newRow("probes left out, 5xx counted") << exposition << true << 48.0 << 4.0;
    QTest::newRow("no counter yet") << QByteArray("# HELP x\nflashstock_http_requests_in_flight 0\n") << false << 0.0
                                    << 0.0;
    QTest::newRow("empty") << QByteArray() << false << 0.0 << 0.0;
}

void TestUiServers::requestTotals()
{
    QFETCH(QByteArray, metrics);
    QFETCH(bool, found);
    QFETCH(double, requests);
    QFETCH(double, errors);
    const std::optional<RequestTotals> totals = ServerMonitor::requestTotals(metrics);
    QCOMPARE(totals.has_value(), found);
    if (!found)
        return;
    QCOMPARE(totals->requests, requests);
    QCOMPARE(totals->errors, errors);
}

void TestUiServers::stoppedServerTurnsRed()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString bookUrl = u"sqlite:///"_s + dir.filePath(u"book.db"_s);
    const DbUrl book = FS_OK(DbUrl::parse(bookUrl));
    QString token;
    {
        auto engine = Engine::open(EngineOptions{book, std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(engine);
        FS_VERIFY_OK((*engine)->addSku(u"TEE"_s, 100));
        token = test::addAccessToken(**engine, u"console"_s, AccessScope::Read);
        QVERIFY(!token.isEmpty());
    }
    // Each server beats once a second (its expiry pass).
    test::ServerProcess a(book, std::nullopt, {u"--expire-every"_s, u"1"_s});
    test::ServerProcess b(book, std::nullopt, {u"--expire-every"_s, u"1"_s});
    QVERIFY2(a.start(), qPrintable(a.errorString()));
    QVERIFY2(b.start(), qPrintable(b.errorString()));

    QTemporaryDir consoleDir;
    MainWindow w(EngineProfile{consoleDir.path(), bookUrl, u"none"_s, u"tester"_s});
    w.serverMonitor()->setReadToken(token.toUtf8());
    QAbstractItemModelTester tester(w.serversView()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    // The same heartbeats, seen by a console without a token: it shows what it can.
    ServerMonitor untokened;
    connect(w.session()->worker(), &EngineWorker::sampled, &untokened, [&untokened](const LiveSnapshot &snap) {
        if (snap.expiry)
            untokened.update(*snap.expiry);
    });
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->connection().bookOpen, 10000);
    const ServerMonitor &monitor = *w.serverMonitor();
    const auto upAndReady = [&](const test::ServerProcess &p) {
        const ServerStatus *s = serverAt(monitor, addressOf(p));
        return s && s->state == ServerStatus::State::Up && s->ready == true && s->beat.pid() == p.pid();
    };
    QTRY_VERIFY_WITH_TIMEOUT(upAndReady(a) && upAndReady(b), 15000);
    QCOMPARE(w.serverStatusText(), u"Servers: 2 up"_s);
    QCOMPARE(serverAt(monitor, addressOf(a))->beat.host(), QSysInfo::machineHostName());

    // Rates: the console's own probes are not traffic; 30 requests are.
    QTRY_VERIFY_WITH_TIMEOUT(serverAt(monitor, addressOf(a))->requestsPerS == 0.0, 10000);
    QCOMPARE(serverAt(monitor, addressOf(a))->errorsPerS, 0.0);
    for (int i = 0; i < 30; ++i)
        QCOMPARE(test::http("GET", a.baseUrl() + u"/v1/skus/TEE"_s, {}, token).status, 200);
    QTRY_VERIFY_WITH_TIMEOUT(serverAt(monitor, addressOf(a))->requestsPerS > 0, 10000);
    QCOMPARE(serverAt(monitor, addressOf(a))->errorsPerS, 0.0);
    // Without the token: ready and last seen, and why the rates are missing.
    QTRY_VERIFY_WITH_TIMEOUT(serverAt(untokened, addressOf(a)) && serverAt(untokened, addressOf(a))->ready == true
                                 && serverAt(untokened, addressOf(a))->ratesDetail.startsWith(u"no read token"_s),
                             10000);
    QCOMPARE(serverAt(untokened, addressOf(a))->requestsPerS, -1.0);

    // B stops (killed, as a crash): red, with the time of its last heartbeat, within its
    // period (1 s) plus 5 s; the status bar names it.
    const qint64 bPid = b.pid();
    b.kill();
    b.waitForExit(5000);
    QVERIFY(!b.isRunning());
    QElapsedTimer sinceStop;
    sinceStop.start();
    const auto stopped = [&] {
        const ServerStatus *s = serverAt(monitor, addressOf(b), bPid);
        return s && s->state == ServerStatus::State::Stopped;
    };
    QTRY_VERIFY_WITH_TIMEOUT(stopped(), 15000);
    const qint64 took = sinceStop.elapsed();
    qInfo("red %lld ms after the kill", took);
    QVERIFY2(took <= 1000 + 5000, qPrintable(u"%1 ms"_s.arg(took)));
    const ServerStatus stoppedB = *serverAt(monitor, addressOf(b), bPid);
    QTRY_VERIFY_WITH_TIMEOUT(w.serverStatusText().contains(u"Server %1 STOPPED at"_s.arg(addressOf(b))), 2000);
    QVERIFY(w.serverStatusText().contains(u"1 up"_s));
    const ServerListModel &model = *w.serversView()->model();
    const int row = model.rowOf(stoppedB.id());
    QVERIFY(row >= 0);
    QCOMPARE(model.index(row, ServerListModel::State).data(RawRole).toString(), u"stopped"_s);
    QVERIFY2(model.index(row, ServerListModel::State).data().toString().startsWith(u"STOPPED at "_s),
             qPrintable(model.index(row, ServerListModel::State).data().toString()));
    QCOMPARE(model.index(row, ServerListModel::State).data(Qt::ForegroundRole).value<QBrush>().color(),
             QColor(ConsoleText::kRed));
    QVERIFY(upAndReady(a));
    w.tabs()->setCurrentIndex(MainWindow::ServersTab);
    if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
        QCoreApplication::processEvents();
        QVERIFY(w.grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).filePath(u"servers-one-down.png"_s)));
    }

    // Started again on its port: the stopped one is replaced, no longer an alarm.
    QVERIFY2(b.start(), qPrintable(b.errorString()));
    QTRY_VERIFY_WITH_TIMEOUT(upAndReady(b), 15000);
    QTRY_COMPARE_WITH_TIMEOUT(serverAt(monitor, addressOf(b), bPid)->state, ServerStatus::State::Replaced, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(w.serverStatusText(), u"Servers: 2 up"_s, 5000);
}

void TestUiServers::loopbackOfAnotherHostIsNotAsked()
{
    // A server on another machine that listens on its loopback cannot be reached from here:
    // asking 127.0.0.1 would ask this machine. It is listed from its heartbeat, not asked.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    ExpiryStatus status;
    status.nowMs = now;
    status.expirers << ExpirerBeat{u"server@elsewhere.example:41"_s, u"server"_s, u"ops"_s, 1000, now - 500, 0,
                                   u"127.0.0.1:18080"_s}
                    << ExpirerBeat{u"server@elsewhere.example:42"_s, u"server"_s, u"ops"_s, 1000, now - 500, 0,
                                   u"[::1]:18081"_s};
    ServerMonitor monitor;
    monitor.update(status);
    QCOMPARE(monitor.servers().size(), 2);
    for (const ServerStatus &s : monitor.servers()) {
        QCOMPARE(s.state, ServerStatus::State::Up);
        QVERIFY(!s.asked);
        QVERIFY2(s.readyDetail.contains(u"loopback address of elsewhere.example"_s), qPrintable(s.readyDetail));
    }
    // The same address named by this host is asked.
    status.expirers = {ExpirerBeat{u"server@%1:43"_s.arg(QSysInfo::machineHostName()), u"server"_s, u"ops"_s, 1000,
                                   now - 500, 0, u"127.0.0.1:1"_s}};
    monitor.update(status);
    QVERIFY(monitor.servers().value(0).asked);
}

QTEST_MAIN(TestUiServers)
#include "tst_ui_servers.moc"
