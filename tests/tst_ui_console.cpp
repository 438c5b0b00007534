// The console end to end, offscreen, on a real SQLite book in a temporary data dir:
// the launch wizard to a started sale, approval of a negative drift through the dialog,
// and the event loop staying responsive while the worker waits on a gate that never answers.

#include "ApprovalDialog.h"
#include "ConsoleSession.h"
#include "Engine.h"
#include "EngineWorker.h"
#include "LaunchWizard.h"
#include "GateNodesStatus.h"
#include "MainWindow.h"
#include "ReconciliationView.h"
#include "SalesView.h"
#include "models/SalesModel.h"
#include "models/DiscrepancyModel.h"
#include "models/LedgerModel.h"
#include "models/WarningModel.h"
#include "gate/GateKeys.h"
#include "reconcile/Reconciler.h"
#include "store/Database.h"
#include "store/SaleStore.h"
#include "gate/Gate.h"
#include "models/ModelRoles.h"
#include "support/EngineHelpers.h"
#include "support/ClusterFixture.h"
#include "support/RedisFixture.h"

#include <QComboBox>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QTcpServer>
#include <QtTest>

#include <csignal>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

std::unique_ptr<Engine> openBook(const QString &dataDir)
{
    auto db = DbUrl::parse(u"sqlite:///"_s + QDir(dataDir).absoluteFilePath(u"flashstock.db"_s));
    if (!db)
        return nullptr;
    auto engine = Engine::open(EngineOptions{*db, std::nullopt, Actor{u"tester"_s, u"test"_s}});
    return engine ? std::move(*engine) : nullptr;
}

/// `[approval] approvers=NAMES` in data dir `dir`'s flashstock.ini: the seed of its book's
/// approver policy.
bool writeApproverSeed(const QString &dir, const QString &names)
{
    QFile ini(QDir(dir).absoluteFilePath(u"flashstock.ini"_s));
    return ini.open(QIODevice::WriteOnly) && ini.write("[approval]\napprovers=" + names.toUtf8() + '\n') > 0;
}

} // namespace

class TestUiConsole : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { std::signal(SIGPIPE, SIG_IGN); }
    void wizardLaunchesSale();
    void pauseAndResumeFromSalesView();
    void embeddedGateThatFailsIsDownNotAbsent();
    void approveNegativeDriftThroughDialog();
    void reconciliationShowsTheApprovers();
    void firstOfTwoApprovalsIsLabelled();
    void staysResponsiveWhileGateHangs();
    void engineWarningShowsInTheStatusBar();
    void statusBarShowsEachClusterNode();
    void preflightShowsTheEngineLaunchRules();
    void reconciliationFollowsMouseAndKeyboard();
};

void TestUiConsole::wizardLaunchesSale()
{
    // Through the gate, always: a launch that fell back to book-only would test something else.
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    RedisFixture redis;
    QVERIFY2(redis.start(), qPrintable(redis.errorString()));
    const EngineProfile profile{dir.path(), {}, redis.url().toString(), u"tester"_s};
    ConsoleSession session;
    QSignalSpy opened(session.worker(), &EngineWorker::opened);
    session.open(profile);
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 10000);
    const ConnectionInfo info = opened.first().first().value<ConnectionInfo>();
    QVERIFY2(info.bookOpen, qPrintable(info.error));
    QTRY_VERIFY(session.connection().bookOpen); // the session's copy arrives queued

    LaunchWizard wizard(&session, {});
    wizard.show();
    wizard.skuField()->setCurrentText(u"FLASH1"_s);
    wizard.unitsField()->setValue(50);
    wizard.holdField()->setValue(60);
    wizard.limitField()->setValue(2);
    QSignalSpy preflight(&wizard, &LaunchWizard::preflightShown);
    wizard.next();
    QTRY_VERIFY_WITH_TIMEOUT(!preflight.isEmpty(), 10000);
    QVERIFY2(preflight.first().first().toBool(), "pre-flight failed");
    QVERIFY(wizard.button(QWizard::FinishButton)->isEnabled());
    QSignalSpy launched(session.worker(), &EngineWorker::saleLaunched);
    QSignalSpy failed(session.worker(), &EngineWorker::failed);
    wizard.button(QWizard::FinishButton)->click();
    QTRY_VERIFY_WITH_TIMEOUT(!launched.isEmpty() || !failed.isEmpty(), 10000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
    const Sale sale = launched.first().first().value<Sale>();
    QCOMPARE(sale.sku, u"FLASH1"_s);
    QCOMPARE(sale.status, SaleStatus::Open);
    QCOMPARE(sale.units, 50);
    QCOMPARE(sale.holdSeconds, 60);
    QCOMPARE(sale.perUserLimit, 2);

    auto book = openBook(dir.path());
    QVERIFY(book);
    auto sales = book->sales().list();
    QVERIFY(sales && sales->size() == 1);
    QCOMPARE(sales->first().status, SaleStatus::Open);
    QCOMPARE(FS_OK(book->book().levels(u"FLASH1"_s)).available, 50);
    QVERIFY(info.gateConfigured);

    // A crowd on the started sale: 25 buyers take the 50 units, 5 find it sold out, one
    // comes back over the limit. The live sample carries the gate's counters, which the
    // live view turns into the reserve and reject rates.
    auto gated = Engine::open(EngineOptions{FS_OK(DbUrl::parse(u"sqlite:///"_s + dir.filePath(u"flashstock.db"_s))),
                                            redis.url(), Actor{u"tester"_s, u"test"_s}});
    FS_VERIFY_OK(gated);
    for (int i = 1; i <= 30; ++i)
        FS_VERIFY_OK((*gated)->reserve(u"o%1"_s.arg(i), u"u%1"_s.arg(i), {{u"FLASH1"_s, 2, {}}}));
    QCOMPARE(FS_OK((*gated)->reserve(u"again"_s, u"u1"_s, {{u"FLASH1"_s, 1, {}}})).outcome, Outcome::LimitExceeded);
    QSignalSpy sampled(session.worker(), &EngineWorker::sampled);
    QVERIFY(session.sample());
    QTRY_VERIFY_WITH_TIMEOUT(!sampled.isEmpty(), 10000);
    const LiveSnapshot snap = sampled.first().first().value<LiveSnapshot>();
    QCOMPARE(snap.skus.size(), 1);
    QCOMPARE(snap.skus.first().gateReserved, 25);
    QCOMPARE(snap.skus.first().gateRefused, 6);
    QCOMPARE(snap.skus.first().available, 0);
    // Book-only, reserves skip the gate: its counters no longer tell the reject rate (n/a).
    FS_VERIFY_OK((*gated)->setSaleBookOnly(sale.id, true));
    sampled.clear();
    QVERIFY(session.sample());
    QTRY_VERIFY_WITH_TIMEOUT(!sampled.isEmpty(), 10000);
    QCOMPARE(sampled.first().first().value<LiveSnapshot>().skus.first().gateRefused, -1);
}

void TestUiConsole::pauseAndResumeFromSalesView()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    qint64 saleId = 0;
    {
        auto book = openBook(dir.path());
        QVERIFY(book);
        FS_VERIFY_OK(book->addSku(u"P1"_s, 10));
        auto sale = book->createSale(u"P1"_s, 0, 0, 60, 0);
        FS_VERIFY_OK(sale);
        saleId = sale->id;
        FS_VERIFY_OK(book->setSaleStatus(saleId, SaleStatus::Open));
    }
    ConsoleSession session;
    SalesView view(&session);
    view.resize(1000, 400);
    view.show();
    QSignalSpy opened(session.worker(), &EngineWorker::opened);
    session.open(EngineProfile{dir.path(), {}, u"none"_s, u"tester"_s});
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 10000);
    // Samples refresh the view, as the main window wires them (the view asks for one after a change).
    connect(session.worker(), &EngineWorker::sampled, &view,
            [&view](const LiveSnapshot &snap) { view.setSnapshot(snap, {}); });
    QVERIFY(session.sample());
    QTRY_COMPARE_WITH_TIMEOUT(view.model()->rowCount(), 1, 10000);
    view.table()->selectRow(0);
    QTRY_VERIFY(view.pauseAction()->isEnabled());
    QVERIFY(!view.startAction()->isEnabled());

    const auto statusAfter = [&](QAction *action) {
        QSignalSpy changed(session.worker(), &EngineWorker::saleChanged);
        action->trigger();
        for (QDeadlineTimer deadline(10000); changed.isEmpty() && !deadline.hasExpired();)
            QTest::qWait(20);
        if (changed.isEmpty())
            return SaleStatus::Scheduled; // never answered
        return changed.first().first().value<Sale>().status;
    };
    QCOMPARE(statusAfter(view.pauseAction()), SaleStatus::Paused);
    {
        auto book = openBook(dir.path());
        QCOMPARE(FS_OK(book->sales().get(saleId)).status, SaleStatus::Paused);
        QCOMPARE(FS_OK(book->reserve(u"o1"_s, u"u1"_s, {{u"P1"_s, 1, {}}})).outcome, Outcome::SaleClosed);
    }
    QTRY_VERIFY(view.startAction()->isEnabled()); // Start resumes a paused sale
    QCOMPARE(statusAfter(view.startAction()), SaleStatus::Open);
    auto book = openBook(dir.path());
    QCOMPARE(FS_OK(book->reserve(u"o2"_s, u"u1"_s, {{u"P1"_s, 1, {}}})).outcome, Outcome::Reserved);
}

void TestUiConsole::embeddedGateThatFailsIsDownNotAbsent()
{
    // A data dir whose socket path is too long for a unix socket: the book opens, the
    // embedded redis-server cannot start.
    QTemporaryDir base;
    QVERIFY(base.isValid());
    const QString dataDir = base.filePath(QString(120, u'd'));
    QVERIFY(QDir().mkpath(dataDir));
    ConsoleSession session;
    QSignalSpy opened(session.worker(), &EngineWorker::opened);
    session.open(EngineProfile{dataDir, {}, {}, u"tester"_s});
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 10000);
    const ConnectionInfo info = opened.first().first().value<ConnectionInfo>();
    QVERIFY2(info.bookOpen, qPrintable(info.error));
    QVERIFY2(info.gateDisplay.contains(u"failed"_s), qPrintable(info.gateDisplay));
    QVERIFY(info.gateConfigured); // down, not book-only: nothing may open a sale without the gate

    SaleRequest request;
    request.sku = u"NOGATE"_s;
    request.units = 5;
    QSignalSpy launched(session.worker(), &EngineWorker::saleLaunched);
    QSignalSpy failed(session.worker(), &EngineWorker::failed);
    session.launchSale(request);
    QTRY_VERIFY_WITH_TIMEOUT(!launched.isEmpty() || !failed.isEmpty(), 20000);
    QVERIFY2(!failed.isEmpty(), "a sale must not open while its gate is down");
    auto book = openBook(dataDir);
    QVERIFY(book);
    auto sales = book->sales().list();
    FS_VERIFY_OK(sales);
    for (const Sale &s : *sales)
        QVERIFY(s.status != SaleStatus::Open);
}

void TestUiConsole::approveNegativeDriftThroughDialog()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(writeApproverSeed(dir.path(), u"alice"_s));
    {
        auto book = openBook(dir.path());
        QVERIFY(book);
        FS_VERIFY_OK(book->addSku(u"A"_s, 10));
        // Units the ledger cannot explain: negative drift the reconciler must not fix by itself.
        QVERIFY(book->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5 WHERE sku = 'A'"_s));
    }
    ConsoleSession session;
    ReconciliationView view(&session);
    view.resize(1000, 600);
    view.show();
    QSignalSpy opened(session.worker(), &EngineWorker::opened);
    session.open(EngineProfile{dir.path(), {}, u"none"_s, u"alice"_s});
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 10000);
    QSignalSpy reconciled(session.worker(), &EngineWorker::reconciled);
    QSignalSpy failed(session.worker(), &EngineWorker::failed);
    session.reconcileNow(0);
    session.reconcileNow(0);
    // Two passes (the view's own listing after open may come before or after them).
    QTRY_VERIFY_WITH_TIMEOUT(reconciled.count() == 2 || !failed.isEmpty(), 10000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
    // The spy counts in the worker's thread; the view's model updates by a queued signal.
    QTRY_COMPARE_WITH_TIMEOUT(view.model()->rowCount(), 1, 5000);
    const Discrepancy d = *view.model()->at(0);
    QCOMPARE(d.status, DiscrepancyStatus::PendingApproval);
    QCOMPARE(d.delta, -5);

    qint64 ledgerBefore = 0;
    {
        auto book = openBook(dir.path());
        ledgerBefore = FS_OK(book->book().ledgerCount());
        QCOMPARE(FS_OK(book->book().levels(u"A"_s)).available, 15);
    }
    QVERIFY(view.select(d.id));
    QVERIFY(view.approveAction()->isEnabled());
    ApprovalDialog *dialog = view.confirmSelected(true);
    QVERIFY(dialog);
    QVERIFY2(dialog->changeSummary().contains(u"15/0/0 → 10/0/0"_s), qPrintable(dialog->changeSummary()));
    QVERIFY(!dialog->confirmButton()->isEnabled()); // a reason is required
    QTest::keyClicks(dialog->reasonEdit(), u"stocktake confirms the ledger"_s);
    QVERIFY(dialog->confirmButton()->isEnabled());
    QSignalSpy resolved(session.worker(), &EngineWorker::discrepancyResolved);
    dialog->confirmButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!resolved.isEmpty(), 10000);
    QCOMPARE(resolved.first().first().value<Discrepancy>().status, DiscrepancyStatus::Approved);
    QTRY_COMPARE_WITH_TIMEOUT(view.model()->at(view.model()->rowOf(d.id))->status, DiscrepancyStatus::Approved, 5000);
    // Approved: nothing pending is selected any more, so it cannot be applied twice from here.
    view.setStatusFilter(QString());
    QVERIFY(view.select(d.id));
    QVERIFY(!view.approveAction()->isEnabled());
    QVERIFY(!view.confirmSelected(true));

    auto book = openBook(dir.path());
    QCOMPARE(FS_OK(book->book().ledgerCount()), ledgerBefore + 1); // the book changed exactly once
    QCOMPARE(FS_OK(book->book().levels(u"A"_s)).available, 10);
    QVERIFY(FS_OK(book->book().check()).ok());
}

void TestUiConsole::reconciliationShowsTheApprovers()
{
    // The view says who the approvers are (the book's policy) and whether the operator may
    // decide; an operator who may not finds Approve and Reject disabled, whatever
    // FLASHSTOCK_APPROVERS says.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(writeApproverSeed(dir.path(), u"alice,bob"_s));
    qputenv("FLASHSTOCK_APPROVERS", "mallory");
    const auto unset = qScopeGuard([] { qunsetenv("FLASHSTOCK_APPROVERS"); });
    {
        auto book = openBook(dir.path());
        QVERIFY(book);
        FS_VERIFY_OK(book->addSku(u"A"_s, 10));
        QVERIFY(book->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
        QCOMPARE(FS_OK(Reconciler(*book).runPass(0)).stillPending, 1);
    }
    for (const QString &who : {u"mallory"_s, u"alice"_s}) {
        ConsoleSession session;
        ReconciliationView view(&session);
        view.resize(1100, 520);
        view.show();
        QSignalSpy listed(session.worker(), &EngineWorker::approversListed);
        session.open(EngineProfile{dir.path(), {}, u"none"_s, who});
        QTRY_VERIFY_WITH_TIMEOUT(!listed.isEmpty(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(view.model()->rowCount(), 1, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!view.approversLabel()->text().isEmpty(), 5000);
        QVERIFY(view.select(view.model()->at(0)->id));
        const QString text = view.approversLabel()->text();
        QVERIFY2(text.contains(u"Approvers: alice, bob."_s) && text.contains(u"above 100 units"_s), qPrintable(text));
        const bool may = who == u"alice"_s;
        QVERIFY2(text.contains(may ? u"You (alice) may approve"_s : u"You (mallory) are not an approver"_s),
                 qPrintable(text));
        QCOMPARE(view.approveAction()->isEnabled(), may);
        QCOMPARE(view.rejectAction()->isEnabled(), may);
        if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
            QCoreApplication::processEvents();
            QVERIFY(view.grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR"))
                                         .absoluteFilePath(u"approvers-%1.png"_s.arg(who))));
        }
    }
}

void TestUiConsole::firstOfTwoApprovalsIsLabelled()
{
    // A correction above the four-eyes limit: the dialog and the list say that the first
    // approval applies nothing and who gave it; the second approver's dialog says it applies.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(writeApproverSeed(dir.path(), u"alice,bob"_s));
    {
        auto book = openBook(dir.path());
        QVERIFY(book);
        FS_VERIFY_OK(book->addSku(u"A"_s, 1000));
        QVERIFY(book->database().exec(u"UPDATE buckets SET available = 850, total = 850"_s));
        QCOMPARE(FS_OK(Reconciler(*book).runPass(0)).stillPending, 1);
    }
    const auto statusText = [](ReconciliationView &view) {
        return view.table()->model()->index(0, DiscrepancyModel::Status).data().toString();
    };
    {
        ConsoleSession session;
        ReconciliationView view(&session);
        view.resize(1400, 600);
        view.show();
        QSignalSpy listed(session.worker(), &EngineWorker::approversListed);
        session.open(EngineProfile{dir.path(), {}, u"none"_s, u"alice"_s});
        QTRY_VERIFY_WITH_TIMEOUT(!listed.isEmpty(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(view.table()->model()->rowCount(), 1, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(statusText(view).contains(u"two approvers"_s), 5000);
        QVERIFY(view.select(view.model()->at(0)->id));
        ApprovalDialog *dialog = view.confirmSelected(true);
        QVERIFY(dialog);
        QVERIFY2(dialog->changeSummary().contains(u"first of two approvals"_s)
                     && dialog->changeSummary().contains(u"changes nothing"_s)
                     && !dialog->changeSummary().contains(u"Applied once"_s),
                 qPrintable(dialog->changeSummary()));
        if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
            QCoreApplication::processEvents();
            QVERIFY(dialog->grab().save(
                QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(u"first-of-two-approvals.png"_s)));
        }
        QTest::keyClicks(dialog->reasonEdit(), u"counted 850"_s);
        QSignalSpy resolved(session.worker(), &EngineWorker::discrepancyResolved);
        dialog->confirmButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(!resolved.isEmpty(), 10000);
        QVERIFY(resolved.first().first().value<Discrepancy>().awaitsSecondApprover());
        QTRY_VERIFY_WITH_TIMEOUT(statusText(view).contains(u"first approval by alice at "_s), 5000);
        QVERIFY2(statusText(view).contains(u"needs a second approver"_s), qPrintable(statusText(view)));
        if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
            QCoreApplication::processEvents();
            QVERIFY(view.grab().save(
                QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(u"half-approved.png"_s)));
        }
    }
    ConsoleSession session;
    ReconciliationView view(&session);
    view.resize(1260, 600); // the console's default width
    view.show();
    QSignalSpy listed(session.worker(), &EngineWorker::approversListed);
    session.open(EngineProfile{dir.path(), {}, u"none"_s, u"bob"_s});
    QTRY_VERIFY_WITH_TIMEOUT(!listed.isEmpty(), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(view.table()->model()->rowCount(), 1, 5000);
    // Listed with its first approval: the long status and the proposal wrap in their columns
    // and both show beside the figures without scrolling.
    QVERIFY2(statusText(view).contains(u"first approval by alice at "_s), qPrintable(statusText(view)));
    QCoreApplication::processEvents();
    QTableView *table = view.table();
    const int proposalEnd
        = table->columnViewportPosition(DiscrepancyModel::Proposal) + table->columnWidth(DiscrepancyModel::Proposal);
    QVERIFY2(proposalEnd <= table->viewport()->width(),
             qPrintable(u"the proposal ends at %1 px of %2"_s.arg(proposalEnd).arg(table->viewport()->width())));
    QVERIFY2(table->rowHeight(0) > table->fontMetrics().height() * 2, qPrintable(u"row height %1"_s.arg(table->rowHeight(0))));
    QVERIFY(view.select(view.model()->at(0)->id));
    ApprovalDialog *dialog = view.confirmSelected(true);
    QVERIFY(dialog);
    QVERIFY2(dialog->changeSummary().contains(u"first approval by alice at "_s)
                 && dialog->changeSummary().contains(u"this approval applies it"_s),
             qPrintable(dialog->changeSummary()));
    dialog->reject();
}

void TestUiConsole::staysResponsiveWhileGateHangs()
{
    // A "Redis" that accepts connections and never answers: every gate call waits its timeout.
    QTcpServer silent;
    QVERIFY(silent.listen(QHostAddress::LocalHost));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const EngineProfile profile{dir.path(), {},
                                    u"redis://127.0.0.1:%1?connect_timeout_ms=5000&timeout_ms=5000"_s.arg(silent.serverPort()),
                                    u"tester"_s};
    MainWindow window(profile);
    window.show();
    QSignalSpy sampled(window.session()->worker(), &EngineWorker::sampled);

    QElapsedTimer clock, sinceTick;
    qint64 longestStallMs = 0;
    QTimer tick;
    tick.setInterval(10);
    connect(&tick, &QTimer::timeout, this, [&] {
        longestStallMs = qMax(longestStallMs, sinceTick.restart());
    });
    clock.start();
    sinceTick.start();
    tick.start();
    QTRY_VERIFY_WITH_TIMEOUT(!sampled.isEmpty(), 30000); // the first sample waits on the silent gate
    tick.stop();
    const qint64 blockedMs = clock.elapsed();
    qInfo("worker was busy %lld ms on the silent gate; longest GUI stall %lld ms", blockedMs, longestStallMs);
    QVERIFY2(blockedMs >= 4000, "the slow operation did not run long enough to measure anything");
    QVERIFY2(longestStallMs < 1000, "the GUI thread was blocked");
    const LiveSnapshot snap = sampled.first().first().value<LiveSnapshot>();
    QVERIFY(snap.health.bookUp);
    QVERIFY(!snap.health.gateUp);
    QTRY_VERIFY_WITH_TIMEOUT(window.gateStatusText().contains(u"DOWN"_s), 5000); // queued to the window
    QVERIFY(window.bookStatusText().contains(u"up"_s));
}

void TestUiConsole::engineWarningShowsInTheStatusBar()
{
    // Real redis-server, real book: the gate lost the SKU's stock key (Redis lost its data).
    FS_GATED_ENGINE(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"W"_s, 10));
    const qint64 saleId = FS_OK(engine->createSale(u"W"_s, 0, 0, 60, 0)).id;
    engine.reset();
    QVERIFY(redis.command({"HDEL", GateKeys::key(u"W"_s, "gate"), "available"}).has_value());

    QTemporaryDir dataDir;
    MainWindow window(EngineProfile{dataDir.path(), fresh.urlText(), redis.url().toString(), u"tester"_s});
    window.resize(1280, 800);
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->connection().bookOpen, 10000);
    QCOMPARE(window.warningStatusText(), u"No warnings"_s);
    // Starting the sale finds the stock key gone and refills it from the book: the engine
    // warns, and the console shows it within a sample or two.
    QSignalSpy changed(window.session()->worker(), &EngineWorker::saleChanged);
    window.session()->setSaleStatus(saleId, SaleStatus::Open);
    QTRY_VERIFY_WITH_TIMEOUT(!changed.isEmpty(), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(window.warningStatusText().contains(u"1 warning"_s), 5000);
    const EngineWarning *w = window.warningModel()->at(0);
    QVERIFY(w);
    QCOMPARE(w->kind, WarningKind::GateRestored);
    QCOMPARE(w->sku, u"W"_s);
    QVERIFY2(w->message.contains(u"refilled from the book, available 10"_s), qPrintable(w->message));
    QCOMPARE(FS_OK(Gate(redis.url()).available(u"W"_s)), 10);

    QDialog *list = window.showWarnings();
    QVERIFY(list->isVisible());
    auto *table = list->findChild<QTableView *>();
    QVERIFY(table);
    QCOMPARE(table->model()->rowCount(), 1);
    QCOMPARE(table->model()->index(0, WarningModel::Kind).data(RawRole).toString(), u"gate_restored"_s);
    if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
        QCoreApplication::processEvents();
        const QDir shots(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR"));
        QVERIFY(window.grab().save(shots.absoluteFilePath(u"warnings-status.png"_s)));
        QVERIFY(list->grab().save(shots.absoluteFilePath(u"warnings.png"_s)));
    }
    window.warningModel()->clear(); // the Clear button
    QCOMPARE(window.warningStatusText(), u"No warnings"_s);
}

void TestUiConsole::statusBarShowsEachClusterNode()
{
    // A real Redis Cluster (3 masters, 3 replicas) as the console's gate: a dot per node in
    // the status bar; a replica that dies shows within a sample or two, the gate stays up.
    FLASHSTOCK_REQUIRE_REDIS_CLUSTER();
    ClusterFixture cluster(3, 1, 1000);
    QVERIFY2(cluster.start(), qPrintable(cluster.errorString()));
    QTemporaryDir dataDir;
    MainWindow window(EngineProfile{dataDir.path(), {}, cluster.url().toString(), u"tester"_s});
    window.resize(1280, 800);
    window.show();
    GateNodesStatus *nodes = window.gateNodesStatus();
    QTRY_COMPARE_WITH_TIMEOUT(nodes->summary(), u"Nodes: 3/3 masters, 3/3 replicas up"_s, 10000);
    QVERIFY(nodes->isVisible());
    QVERIFY(window.gateStatusText().contains(u"Gate: up"_s));
    RedisFixture *replica = cluster.replicasOf(cluster.masters().first()).value(0);
    QVERIFY(replica);
    replica->kill();
    QTRY_COMPARE_WITH_TIMEOUT(nodes->summary(), u"Nodes: 3/3 masters, 2/3 replicas up"_s, 10000);
    QVERIFY(nodes->toolTip().contains(u"127.0.0.1:%1"_s.arg(replica->port())));
    QVERIFY(window.gateStatusText().contains(u"Gate: up"_s)); // replicas serve no SKU
    if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
        QCoreApplication::processEvents();
        QVERIFY(window.grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(u"cluster-nodes.png"_s)));
    }
}

void TestUiConsole::preflightShowsTheEngineLaunchRules()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    {
        auto book = openBook(dir.path());
        QVERIFY(book);
        FS_VERIFY_OK(book->addSku(u"P"_s, 10));
        FS_VERIFY_OK(book->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
        QCOMPARE(FS_OK(Reconciler(*book).runPass(0)).stillPending, 1);
    }
    ConsoleSession session;
    QSignalSpy opened(session.worker(), &EngineWorker::opened);
    session.open(EngineProfile{dir.path(), {}, u"none"_s, u"tester"_s});
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 10000);
    QSignalSpy ready(session.worker(), &EngineWorker::preflightReady);
    session.preflight(u"P"_s, 5);
    QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty(), 10000);
    const PreflightResult result = ready.first().first().value<PreflightResult>();
    QVERIFY(!result.ok()); // the engine's rule, as `sale start` applies it
    bool discrepancyBlocks = false;
    for (const PreflightItem &item : result.items)
        discrepancyBlocks = discrepancyBlocks || (!item.ok && item.blocking && item.label.contains(u"discrepancy"_s));
    QVERIFY(discrepancyBlocks);
}

void TestUiConsole::reconciliationFollowsMouseAndKeyboard()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    RedisFixture redis;
    QVERIFY2(redis.start(), qPrintable(redis.errorString()));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(writeApproverSeed(dir.path(), u"alice"_s));
    {
        auto db = FS_OK(DbUrl::parse(u"sqlite:///"_s + dir.filePath(u"flashstock.db"_s)));
        auto engine = Engine::open(EngineOptions{db, redis.url(), Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(engine);
        Engine &e = **engine;
        FS_VERIFY_OK(e.addSku(u"B"_s, 40, 2));
        FS_VERIFY_OK(e.addSku(u"C"_s, 10));
        // Activity in bucket 1 of B, so its ledger has more than one row there.
        int reserved = 0;
        for (int i = 0; reserved < 3; ++i) {
            const QString order = u"o%1"_s.arg(i);
            if (Book::preferredBucket(order, 2) != 1)
                continue;
            FS_VERIFY_OK(e.reserve(order, u"u%1"_s.arg(i), {{u"B"_s, 1, {}}}));
            ++reserved;
        }
        // Units their ledgers cannot explain, in bucket 1 of B and in C.
        FS_VERIFY_OK(e.database().exec(u"UPDATE buckets SET available = available + 4, total = total + 4 "
                                       u"WHERE sku = 'B' AND bucket = 1"_s));
        FS_VERIFY_OK(e.database().exec(u"UPDATE buckets SET available = available + 2, total = total + 2 "
                                       u"WHERE sku = 'C'"_s));
        QCOMPARE(FS_OK(Reconciler(e).runPass(0)).stillPending, 2);
    }
    MainWindow window(EngineProfile{dir.path(), {}, redis.url().toString(), u"alice"_s});
    window.resize(1400, 860);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    window.tabs()->setCurrentIndex(MainWindow::ReconciliationTab);
    ReconciliationView *view = window.reconciliationView();
    QTableView *table = view->table();
    QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 2, 10000);
    QCOMPARE(view->statusFilter(), u"pending_approval"_s);
    // Whether alice may approve comes in its own answer, which may follow the list: until
    // then Approve stays disabled.
    QTRY_VERIFY_WITH_TIMEOUT(view->approversLabel()->text().contains(u"You (alice) may approve"_s), 10000);

    // A mouse click on a row selects it: its detail and trace show, Approve is enabled.
    table->clearSelection();
    QVERIFY(!view->approveAction()->isEnabled());
    int rowOfB = -1;
    for (int r = 0; r < table->model()->rowCount(); ++r)
        if (table->model()->index(r, DiscrepancyModel::Sku).data(RawRole).toString() == u"B"_s)
            rowOfB = r;
    QVERIFY(rowOfB >= 0);
    const qint64 idOfB = table->model()->index(rowOfB, DiscrepancyModel::Id).data(RawRole).toLongLong();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                      table->visualRect(table->model()->index(rowOfB, DiscrepancyModel::Kind)).center());
    QVERIFY(view->approveAction()->isEnabled());
    QVERIFY(view->rejectAction()->isEnabled());
    // The ledger pane: the bucket at issue only, newest first.
    QTRY_VERIFY_WITH_TIMEOUT(view->traceModel()->rowCount() >= 4, 10000); // its initial stock and the 3 reserves
    const QList<LedgerRow> &trace = view->traceModel()->rows();
    for (const LedgerRow &row : trace)
        QCOMPARE(row.bucket, 1);
    QVERIFY(trace.first().id > trace.last().id);
    QCOMPARE(trace.first().operation, u"RESERVE"_s);

    // Ctrl+Enter with the table focused opens the approval; Return in it approves with the reason.
    table->setFocus();
    QTest::keyClick(table, Qt::Key_Return, Qt::ControlModifier);
    auto *dialog = view->findChild<ApprovalDialog *>();
    QVERIFY(dialog);
    QVERIFY(dialog->isApproval());
    QCOMPARE(dialog->discrepancyId(), idOfB);
    QTest::keyClick(dialog->reasonEdit(), Qt::Key_Return); // no reason yet: nothing happens
    QVERIFY(dialog->isVisible());
    QTest::keyClicks(dialog->reasonEdit(), u"stocktake of shelf 4"_s);
    QSignalSpy resolved(window.session()->worker(), &EngineWorker::discrepancyResolved);
    QTest::keyClick(dialog->reasonEdit(), Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(!resolved.isEmpty(), 10000);
    const Discrepancy approved = resolved.first().first().value<Discrepancy>();
    QCOMPARE(approved.status, DiscrepancyStatus::Approved);
    QCOMPARE(approved.reason, u"stocktake of shelf 4"_s);
    // The filter stays on "Pending approval": the approved one left it, the other one stays.
    QTRY_COMPARE_WITH_TIMEOUT(table->model()->rowCount(), 1, 10000);
    QCOMPARE(view->statusFilter(), u"pending_approval"_s);
    QCOMPARE(table->model()->index(0, DiscrepancyModel::Sku).data(RawRole).toString(), u"C"_s);

    // Ctrl+Backspace rejects (with a reason) the one now selected, from the keyboard alone
    // (the window active again once the dialog closed, as a window manager makes it).
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    table->selectRow(0);
    table->setFocus();
    QTest::keyClick(table, Qt::Key_Backspace, Qt::ControlModifier);
    ApprovalDialog *reject = nullptr;
    for (ApprovalDialog *d : view->findChildren<ApprovalDialog *>())
        if (!d->isApproval())
            reject = d;
    QVERIFY(reject);
    QTest::keyClicks(reject->reasonEdit(), u"counted again, the book is right"_s);
    resolved.clear();
    QTest::keyClick(reject->reasonEdit(), Qt::Key_Enter);
    QTRY_VERIFY_WITH_TIMEOUT(!resolved.isEmpty(), 10000);
    // A rejection never leaves the bucket disagreeing with its ledger while C sells: it stays
    // pending approval (C paused) and now proposes the other correction.
    const Discrepancy kept = resolved.first().first().value<Discrepancy>();
    QCOMPARE(kept.status, DiscrepancyStatus::PendingApproval);
    QVERIFY2(kept.detail.contains(u"rejected by alice"_s) && kept.detail.contains(u"now proposed"_s),
             qPrintable(kept.detail));
    QTest::qWait(200);
    QCOMPARE(table->model()->rowCount(), 1);
    QCOMPARE(view->statusFilter(), u"pending_approval"_s);

    // Resolved by and at, as columns.
    view->setStatusFilter(QString());
    QVERIFY(view->select(idOfB));
    const int row = view->model()->rowOf(idOfB);
    QCOMPARE(view->model()->index(row, DiscrepancyModel::ResolvedBy).data().toString(), u"alice"_s);
    QVERIFY(view->model()->index(row, DiscrepancyModel::ResolvedAt).data().toString().endsWith(u" UTC"_s));
    if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
        QCoreApplication::processEvents();
        QVERIFY(window.grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(u"reconciliation.png"_s)));
    }
}

QTEST_MAIN(TestUiConsole)
#include "tst_ui_console.moc"
#include "support/TestChecks.h"
