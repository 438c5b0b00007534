// An operator's sale day in the console, offscreen, on a real SQLite book in a temporary
// data dir with a real redis-server as the gate (RedisFixture): SKU management, a launch
// that never invents stock, the gate controls of the Sales view, holds past expiry and the
// expirer heartbeat, every sale state in Live, times with their zone, export and help, a
// failed connection, and the empty states. With FLASHSTOCK_SHOT_DIR set, each test also
// saves the windows it drove as PNG there, to look at.

#include "ConsoleSession.h"
#include "ConsoleText.h"
#include "Cli.h"
#include "Engine.h"
#include "EngineWorker.h"
#include "HelpDialogs.h"
#include "LaunchWizard.h"
#include "LedgerView.h"
#include "LiveView.h"
#include "MainWindow.h"
#include "ProfileDialog.h"
#include "ProfileSettings.h"
#include "ReconciliationView.h"
#include "SalesView.h"
#include "SkuDialogs.h"
#include "SkuView.h"
#include "TableExport.h"
#include "gate/Gate.h"
#include "gate/GateKeys.h"
#include "models/BucketLevelsModel.h"
#include "models/DiscrepancyModel.h"
#include "models/LedgerModel.h"
#include "models/ModelRoles.h"
#include "models/SalesModel.h"
#include "models/SkuLevelsModel.h"
#include "reconcile/Reconciler.h"
#include "store/Database.h"
#include "store/SaleStore.h"
#include "support/RedisFixture.h"
#include "support/TestChecks.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTextStream>
#include <QtTest>

#include <csignal>
#include <ctime>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// A console on a fresh data dir (SQLite book) with a redis-server of its own as the gate,
/// and engines of the test on the same book and gate.
struct Console {
    QTemporaryDir dir;
    RedisFixture redis;
    std::unique_ptr<MainWindow> window;

    EngineProfile profile() const { return EngineProfile{dir.path(), {}, redis.url().toString(), u"tester"_s}; }
    DbUrl book() const
    {
        return DbUrl::parse(u"sqlite:///"_s + QDir(dir.path()).absoluteFilePath(u"flashstock.db"_s)).value();
    }
    /// An engine of the test on the console's book and gate (source `test`).
    std::unique_ptr<Engine> engine() const
    {
        auto e = Engine::open(EngineOptions{book(), redis.url(), Actor{u"tester"_s, u"test"_s}});
        return e ? std::move(*e) : nullptr;
    }
    SkuLevels levels(const QString &sku) const { return engine()->book().levels(sku).value(); }
};

/// Saves `widget` as `name` into FLASHSTOCK_SHOT_DIR, when set.
void shoot(QWidget *widget, const QString &name)
{
    if (!qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR"))
        return;
    QCoreApplication::processEvents();
    QVERIFY(widget->grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(name)));
}

/// The button of `box` whose text is `text`.
QAbstractButton *button(QMessageBox *box, const QString &text)
{
    for (QAbstractButton *b : box->buttons())
        if (b->text() == text)
            return b;
    return nullptr;
}

/// The row of the SKU in the Live table, or -1.
int liveRow(MainWindow &w, const QString &sku)
{
    return w.liveView()->levelsModel()->rowOf(sku);
}

QString liveCell(MainWindow &w, const QString &sku, int column, int role = Qt::DisplayRole)
{
    const int row = liveRow(w, sku);
    return row < 0 ? QString() : w.liveView()->levelsModel()->index(row, column).data(role).toString();
}

} // namespace

class TestUiSaleDay : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void skusAreManagedFromTheConsole();
    void launchNeverInventsStock();
    void gateControlsInTheSalesView();
    void holdsPastExpiryAndTheirExpirer();
    void everySaleStateInLive();
    void timesCarryTheirZone();
    void exportAndHelp();
    void failedConnectionLeavesNothingStale();
    void emptyStatesAndMaskedPassword();

private:
    /// Starts `c`'s redis-server and its console window; waits until the book is open (the
    /// caller checks FLASHSTOCK_REQUIRE_REDIS_SERVER first, and QTest::currentTestFailed after).
    void open(Console &c);
};

void TestUiSaleDay::initTestCase()
{
    std::signal(SIGPIPE, SIG_IGN);
    // Nine hours east of UTC, so a local time can never pass for UTC.
    qputenv("TZ", "Asia/Tokyo");
    tzset();
    QCoreApplication::setApplicationVersion(u"9.8.7"_s);
}

void TestUiSaleDay::open(Console &c)
{
    QVERIFY(c.dir.isValid());
    QVERIFY2(c.redis.start(), qPrintable(c.redis.errorString()));
    c.window = std::make_unique<MainWindow>(c.profile());
    c.window->resize(1400, 860);
    c.window->show();
    c.window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(c.window.get()));
    QTRY_VERIFY_WITH_TIMEOUT(c.window->session()->connection().bookOpen, 10000);
}

void TestUiSaleDay::skusAreManagedFromTheConsole()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    Console c;
    open(c);
    if (QTest::currentTestFailed())
        return;
    MainWindow &w = *c.window;
    SkuView *view = w.skuView();
    QAbstractItemModelTester tester(view->bucketModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.tabs()->setCurrentIndex(MainWindow::SkusTab);
    QCOMPARE(w.tabs()->currentWidget(), view);

    // Add: the dialog says what it will do, and refuses a bad id before anything is sent.
    auto *add = qobject_cast<AddSkuDialog *>(view->openDialog(view->addSkuAction()));
    QVERIFY(add);
    QTest::keyClicks(add->skuField(), u"MUG BLUE"_s);
    QVERIFY(!add->confirmButton()->isEnabled());
    add->skuField()->setText(u"MUG-BLUE"_s);
    add->stockField()->setValue(120);
    add->bucketsField()->setValue(2);
    QVERIFY2(add->summary().contains(u"120 units available in 2 bucket(s)"_s), qPrintable(add->summary()));
    QVERIFY(add->confirmButton()->isEnabled());
    QTest::keyClick(add->skuField(), Qt::Key_Return); // Return confirms
    QTRY_VERIFY_WITH_TIMEOUT(view->model()->rowOf(u"MUG-BLUE"_s) >= 0, 10000);
    // The SKU table has the view's whole width for its columns (the buckets are below it).
    QVERIFY2(view->table()->width() >= view->width() - 40,
             qPrintable(u"table %1 px of %2"_s.arg(view->table()->width()).arg(view->width())));
    QCOMPARE(c.levels(u"MUG-BLUE"_s).available, 120);
    QCOMPARE(c.levels(u"MUG-BLUE"_s).buckets.size(), 2);
    QCOMPARE(FS_OK(Gate(c.redis.url()).available(u"MUG-BLUE"_s)), 120); // the gate follows

    QVERIFY(view->select(u"MUG-BLUE"_s));
    QTRY_COMPARE(view->bucketModel()->rowCount(), 2);
    // Restock: no reason, no restock.
    auto *restock = qobject_cast<RestockDialog *>(view->openDialog(view->restockAction()));
    QVERIFY(restock);
    restock->qtyField()->setValue(30);
    QVERIFY(!restock->confirmButton()->isEnabled());
    QVERIFY2(restock->summary().contains(u"120 → 150"_s), qPrintable(restock->summary()));
    QTest::keyClick(restock->reasonField(), Qt::Key_Return);
    QVERIFY(restock->isVisible()); // Return without a reason does nothing
    QTest::keyClicks(restock->reasonField(), u"delivery 4711"_s);
    QVERIFY(restock->confirmButton()->isEnabled());
    shoot(restock, u"sku-restock.png"_s);
    restock->confirmButton()->click();
    QTRY_COMPARE_WITH_TIMEOUT(c.levels(u"MUG-BLUE"_s).available, 150, 10000);
    QCOMPARE(FS_OK(Gate(c.redis.url()).available(u"MUG-BLUE"_s)), 150);
    const QList<LedgerRow> rows = FS_OK(c.engine()->book().ledgerOfSku(u"MUG-BLUE"_s));
    QCOMPARE(rows.last().operation, u"ADJUST"_s);
    QCOMPARE(rows.last().operatorName, u"tester"_s);
    QCOMPARE(rows.last().source, u"console"_s);
    auto reason = c.engine()->database().exec(u"SELECT reason, kind, units FROM adjustments ORDER BY id DESC LIMIT 1"_s);
    FS_VERIFY_OK(reason);
    QCOMPARE(reason->first().at(0).toString(), u"delivery 4711"_s);
    QCOMPARE(reason->first().at(1).toString(), u"restock"_s);
    QCOMPARE(reason->first().at(2).toInt(), 30);

    // Buckets: 2 -> 4, available spread again.
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->samples().at(view->model()->rowOf(u"MUG-BLUE"_s)).available, 150, 5000);
    auto *buckets = qobject_cast<BucketsDialog *>(view->openDialog(view->bucketsAction()));
    QVERIFY(buckets);
    buckets->countField()->setValue(4);
    buckets->confirmButton()->click();
    QTRY_COMPARE_WITH_TIMEOUT(c.levels(u"MUG-BLUE"_s).buckets.size(), 4, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(view->bucketModel()->rowCount(), 4, 5000);

    // Rebalance: 10 units from bucket 0 to bucket 3; the dialog refuses more than bucket 0 has.
    auto *move = qobject_cast<RebalanceDialog *>(view->openDialog(view->rebalanceAction()));
    QVERIFY(move);
    const qint64 before0 = c.levels(u"MUG-BLUE"_s).buckets.at(0).available;
    const qint64 before3 = c.levels(u"MUG-BLUE"_s).buckets.at(3).available;
    move->fromField()->setCurrentIndex(0);
    move->toField()->setCurrentIndex(3);
    move->qtyField()->setValue(int(before0) + 1);
    QVERIFY(!move->confirmButton()->isEnabled());
    move->qtyField()->setValue(10);
    QVERIFY(move->confirmButton()->isEnabled());
    move->confirmButton()->click();
    QTRY_COMPARE_WITH_TIMEOUT(c.levels(u"MUG-BLUE"_s).buckets.at(3).available, before3 + 10, 10000);
    QCOMPARE(c.levels(u"MUG-BLUE"_s).buckets.at(0).available, before0 - 10);
    QCOMPARE(c.levels(u"MUG-BLUE"_s).available, 150);
    QVERIFY(FS_OK(c.engine()->book().check()).ok());

    // The list of all SKUs, with a filter.
    FS_VERIFY_OK(c.engine()->addSku(u"CHARGER"_s, 40));
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, 5000);
    QTest::keyClicks(view->filterField(), u"mug"_s);
    QCOMPARE(view->filtered()->rowCount(), 1);
    QCOMPARE(view->filtered()->index(0, SkuLevelsModel::Sku).data().toString(), u"MUG-BLUE"_s);
    view->filterField()->clear();
    QCOMPARE(view->filtered()->rowCount(), 2);
    QVERIFY(view->select(u"MUG-BLUE"_s));
    shoot(&w, u"skus.png"_s);
}

void TestUiSaleDay::launchNeverInventsStock()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    Console c;
    open(c);
    if (QTest::currentTestFailed())
        return;
    MainWindow &w = *c.window;
    FS_VERIFY_OK(c.engine()->addSku(u"OLD"_s, 50));
    FS_VERIFY_OK(c.engine()->addSku(u"EMPTY"_s, 0));
    QTRY_COMPARE_WITH_TIMEOUT(w.liveView()->levelsModel()->rowCount(), 2, 10000);
    const qint64 ledgerBefore = FS_OK(c.engine()->book().ledgerCount());

    // An existing SKU: the wizard asks no stock of it, pre-flight says what the launch will do.
    LaunchWizard *wizard = w.salesView()->openWizard();
    QVERIFY(wizard);
    wizard->skuField()->setCurrentText(u"OLD"_s);
    QVERIFY(!wizard->unitsField()->isEnabled());
    wizard->unitsField()->setValue(500); // ignored for an existing SKU
    QSignalSpy shown(wizard, &LaunchWizard::preflightShown);
    wizard->next();
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 10000);
    QVERIFY(shown.first().first().toBool());
    QVERIFY2(wizard->planText().contains(u"sell the 50 units OLD has available now; its stock is not changed"_s),
             qPrintable(wizard->planText()));
    QVERIFY2(!wizard->planText().contains(u"restock"_s, Qt::CaseInsensitive), qPrintable(wizard->planText()));
    for (const PreflightItem &item : wizard->preflight().items)
        QVERIFY2(!item.label.contains(u"restocks"_s), qPrintable(item.label));
    shoot(wizard, u"launch-existing.png"_s);
    QSignalSpy launched(w.session()->worker(), &EngineWorker::saleLaunched);
    wizard->button(QWizard::FinishButton)->click();
    QTRY_VERIFY_WITH_TIMEOUT(!launched.isEmpty(), 10000);
    QCOMPARE(launched.first().first().value<Sale>().units, 50);
    QCOMPARE(c.levels(u"OLD"_s).total, 50);
    QCOMPARE(FS_OK(c.engine()->book().ledgerCount()), ledgerBefore); // no stock moved

    // A SKU with nothing available: pre-flight blocks; the restock is its own, ledgered step.
    wizard = w.salesView()->openWizard();
    QVERIFY(wizard);
    wizard->skuField()->setCurrentText(u"EMPTY"_s);
    shown.clear();
    QSignalSpy shownAgain(wizard, &LaunchWizard::preflightShown);
    wizard->next();
    QTRY_VERIFY_WITH_TIMEOUT(!shownAgain.isEmpty(), 10000);
    QVERIFY(!shownAgain.first().first().toBool());
    QVERIFY(!wizard->button(QWizard::FinishButton)->isEnabled());
    QVERIFY(wizard->restockButton()->isVisible());
    shoot(wizard, u"launch-needs-restock.png"_s);
    RestockDialog *restock = wizard->openRestock();
    QVERIFY(restock);
    restock->qtyField()->setValue(80);
    QVERIFY(!restock->confirmButton()->isEnabled()); // a reason first
    QTest::keyClicks(restock->reasonField(), u"stock for the flash sale"_s);
    QVERIFY2(restock->summary().contains(u"0 → 80"_s), qPrintable(restock->summary()));
    shownAgain.clear();
    restock->confirmButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!shownAgain.isEmpty(), 10000); // pre-flight again after the restock
    QVERIFY(shownAgain.last().first().toBool());
    QCOMPARE(c.levels(u"EMPTY"_s).available, 80);
    QVERIFY(wizard->planText().contains(u"sell the 80 units EMPTY has available now"_s));
    auto adj = c.engine()->database().exec(u"SELECT kind, reason, operator FROM adjustments ORDER BY id DESC LIMIT 1"_s);
    FS_VERIFY_OK(adj);
    QCOMPARE(adj->first().at(0).toString(), u"restock"_s);
    QCOMPARE(adj->first().at(1).toString(), u"stock for the flash sale"_s);
    QCOMPARE(adj->first().at(2).toString(), u"tester"_s);
    wizard->reject();

    // A new SKU: the plan says it will be created, with the units asked.
    wizard = w.salesView()->openWizard();
    wizard->skuField()->setCurrentText(u"NEW-ONE"_s);
    QVERIFY(wizard->unitsField()->isEnabled());
    wizard->unitsField()->setValue(300);
    QSignalSpy shownNew(wizard, &LaunchWizard::preflightShown);
    wizard->next();
    QTRY_VERIFY_WITH_TIMEOUT(!shownNew.isEmpty(), 10000);
    QVERIFY2(wizard->planText().contains(u"create SKU NEW-ONE with 300 units in 1 bucket"_s), qPrintable(wizard->planText()));
    bool willCreate = false;
    for (const PreflightItem &item : wizard->preflight().items)
        willCreate = willCreate || item.label.startsWith(u"Will create SKU NEW-ONE"_s);
    QVERIFY(willCreate);
    QVERIFY(!c.engine()->book().levels(u"NEW-ONE"_s)); // pre-flight did nothing
    shoot(wizard, u"launch-new.png"_s);
    wizard->reject();
}

void TestUiSaleDay::gateControlsInTheSalesView()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    Console c;
    open(c);
    if (QTest::currentTestFailed())
        return;
    MainWindow &w = *c.window;
    qint64 saleId = 0;
    {
        auto e = c.engine();
        FS_VERIFY_OK(e->addSku(u"PHONE"_s, 40));
        saleId = FS_OK(e->createSale(u"PHONE"_s, 0, 0, 60, 1)).id;
        FS_VERIFY_OK(e->setSaleStatus(saleId, SaleStatus::Open));
    }
    SalesView *sales = w.salesView();
    w.tabs()->setCurrentWidget(sales);
    QTRY_COMPARE_WITH_TIMEOUT(sales->model()->rowCount(), 1, 10000);
    sales->table()->selectRow(0);
    QTRY_VERIFY(sales->bookOnlyAction()->isEnabled());
    QCOMPARE(sales->bookOnlyAction()->text(), u"&Book-only on…"_s);

    // Book-only on, from the keyboard while the table has the focus: it asks first.
    sales->table()->setFocus();
    QTest::keyClick(sales->table(), Qt::Key_B, Qt::ControlModifier | Qt::ShiftModifier);
    QMessageBox *ask = sales->pendingConfirmation();
    QVERIFY(ask);
    QVERIFY2(ask->text().contains(u"sale #%1 of PHONE to book-only"_s.arg(saleId)), qPrintable(ask->text()));
    shoot(ask, u"sales-book-only-confirm.png"_s);
    QSignalSpy changed(w.session()->worker(), &EngineWorker::saleChanged);
    button(ask, u"Switch to book-only"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(!changed.isEmpty(), 10000);
    QVERIFY(changed.first().first().value<Sale>().bookOnly);
    QVERIFY(FS_OK(c.engine()->sales().get(saleId)).bookOnly);
    QTRY_VERIFY_WITH_TIMEOUT(sales->model()->index(0, SalesModel::Status).data().toString() == u"open · book-only"_s,
                             5000);
    QTRY_COMPARE(sales->bookOnlyAction()->text(), u"&Book-only off…"_s);
    // Reserves skip the gate now.
    QCOMPARE(FS_OK(c.engine()->reserve(u"b1"_s, u"u1"_s, {{u"PHONE"_s, 1, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(Gate(c.redis.url()).available(u"PHONE"_s)), 40);

    // Back to the gate: asks, then the gate is rebuilt from the book.
    sales->bookOnlyAction()->trigger();
    ask = sales->pendingConfirmation();
    QVERIFY(ask);
    QVERIFY(ask->text().contains(u"back to the gate"_s));
    changed.clear();
    button(ask, u"Back to the gate"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(!changed.isEmpty(), 10000);
    QVERIFY(!FS_OK(c.engine()->sales().get(saleId)).bookOnly);
    QCOMPARE(FS_OK(Gate(c.redis.url()).available(u"PHONE"_s)), 39);

    // Rebuild the gate of a SKU whose stock key Redis lost; Cancel first changes nothing.
    QVERIFY(c.redis.command({"HDEL", GateKeys::key(u"PHONE"_s, "gate"), "available"}).has_value());
    sales->rebuildGateAction()->trigger();
    ask = sales->pendingConfirmation();
    QVERIFY(ask);
    QVERIFY(ask->text().contains(u"Rebuild the gate of PHONE from the book"_s));
    ask->button(QMessageBox::Cancel)->click();
    QTRY_VERIFY(!sales->pendingConfirmation());
    QCOMPARE(FS_OK(Gate(c.redis.url()).available(u"PHONE"_s)), -1);
    QSignalSpy rebuilt(w.session()->worker(), &EngineWorker::gateRebuilt);
    sales->rebuildGateAction()->trigger();
    button(sales->pendingConfirmation(), u"Rebuild the gate"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(!rebuilt.isEmpty(), 10000);
    QCOMPARE(rebuilt.first().at(1).toLongLong(), 39);
    QCOMPARE(FS_OK(Gate(c.redis.url()).available(u"PHONE"_s)), 39);

    // The Sales view's other shortcuts work with the table focused too: pause, then start
    // (the window active again once the boxes closed, as a window manager makes it).
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    sales->table()->setFocus();
    changed.clear();
    QTest::keyClick(sales->table(), Qt::Key_H, Qt::ControlModifier | Qt::ShiftModifier);
    QTRY_VERIFY_WITH_TIMEOUT(!changed.isEmpty(), 10000);
    QCOMPARE(changed.first().first().value<Sale>().status, SaleStatus::Paused);
    shoot(&w, u"sales.png"_s);
}

void TestUiSaleDay::holdsPastExpiryAndTheirExpirer()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    Console c;
    open(c);
    if (QTest::currentTestFailed())
        return;
    MainWindow &w = *c.window;
    LiveView *live = w.liveView();
    QVERIFY(live->releasesExpiredHolds()); // the console releases them by default
    live->setReleasesExpiredHolds(false);
    {
        auto e = c.engine();
        FS_VERIFY_OK(e->addSku(u"TEE"_s, 20));
        for (int i = 1; i <= 3; ++i)
            FS_VERIFY_OK(e->reserve(u"t%1"_s.arg(i), u"u%1"_s.arg(i), {{u"TEE"_s, 2, {}}}));
        // The holds expired a minute ago, and nothing released them.
        FS_VERIFY_OK(e->database().exec(u"UPDATE orders SET expires_at = expires_at - 960000"_s));
    }
    QTRY_VERIFY_WITH_TIMEOUT(live->expiryText().contains(u"3 hold(s) past expiry"_s), 10000);
    QVERIFY2(live->expiryText().contains(u"6 units locked"_s), qPrintable(live->expiryText()));
    QVERIFY2(live->expiryText().contains(u"nothing is releasing them"_s), qPrintable(live->expiryText()));
    QCOMPARE(liveCell(w, u"TEE"_s, SkuLevelsModel::PastExpiry, RawRole), u"3"_s);
    QVERIFY(liveCell(w, u"TEE"_s, SkuLevelsModel::PastExpiry, Qt::ToolTipRole).contains(u"the oldest expired 1 min"_s));
    shoot(&w, u"live-holds-past-expiry.png"_s);

    // Release them now.
    QSignalSpy expired(w.session()->worker(), &EngineWorker::expired);
    QTest::mouseClick(live->releaseNowButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!expired.isEmpty(), 10000);
    QCOMPARE(expired.first().first().value<ExpiryRun>().orders, 3);
    QCOMPARE(c.levels(u"TEE"_s).locked, 0);
    QTRY_VERIFY_WITH_TIMEOUT(live->expiryText().startsWith(u"No holds past expiry"_s), 10000);
    QVERIFY2(live->expiryText().contains(u"No expirer is running"_s), qPrintable(live->expiryText()));

    // Another process's expirer (`expire --every`, the server) shows with its heartbeat.
    auto other = c.engine();
    FS_VERIFY_OK(other->reserve(u"t4"_s, u"u4"_s, {{u"TEE"_s, 1, {}}}));
    FS_VERIFY_OK(other->database().exec(u"UPDATE orders SET expires_at = 0 WHERE order_id = 't4'"_s));
    QTRY_VERIFY_WITH_TIMEOUT(live->expiryText().contains(u"1 hold(s) past expiry"_s), 10000);
    FS_VERIFY_OK(other->expireAsExpirer(ExpirerId{u"expire-every"_s, 10000}));
    QTRY_VERIFY_WITH_TIMEOUT(live->expiryText().contains(u"released by expire-every"_s), 10000);
    QVERIFY2(live->expiryText().contains(u"every 10 s"_s), qPrintable(live->expiryText()));

    // The console's own expirer: switched on, it releases the next overdue hold by itself.
    FS_VERIFY_OK(other->reserve(u"t5"_s, u"u5"_s, {{u"TEE"_s, 1, {}}}));
    FS_VERIFY_OK(other->database().exec(u"UPDATE orders SET expires_at = 0 WHERE order_id = 't5'"_s));
    live->setReleasesExpiredHolds(true);
    QTRY_COMPARE_WITH_TIMEOUT(c.levels(u"TEE"_s).locked, 0, 15000);
    const ExpiryStatus status = FS_OK(other->expiryStatus());
    bool consoleBeats = false;
    for (const ExpirerBeat &b : status.alive())
        consoleBeats = consoleBeats || (b.kind == u"console"_s && b.everyMs == EngineWorker::kExpirerEveryMs);
    QVERIFY(consoleBeats);
    QTRY_VERIFY_WITH_TIMEOUT(live->expiryText().contains(u"console on"_s), 10000);
    shoot(&w, u"live-expirer.png"_s);
}

void TestUiSaleDay::everySaleStateInLive()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    Console c;
    open(c);
    if (QTest::currentTestFailed())
        return;
    MainWindow &w = *c.window;
    qint64 pausing = 0;
    {
        auto e = c.engine();
        for (const char *sku : {"A-SCHEDULED", "B-OPEN", "C-PAUSED", "D-STOPPED", "E-BOOKONLY", "F-HELD", "G-NOSALE"})
            FS_VERIFY_OK(e->addSku(QString::fromLatin1(sku), 10));
        const auto sale = [&](const QString &sku) { return FS_OK(e->createSale(sku, 0, 0, 60, 0)).id; };
        sale(u"A-SCHEDULED"_s);
        FS_VERIFY_OK(e->setSaleStatus(sale(u"B-OPEN"_s), SaleStatus::Open));
        const qint64 paused = sale(u"C-PAUSED"_s);
        FS_VERIFY_OK(e->setSaleStatus(paused, SaleStatus::Open));
        FS_VERIFY_OK(e->setSaleStatus(paused, SaleStatus::Paused));
        FS_VERIFY_OK(e->setSaleStatus(sale(u"D-STOPPED"_s), SaleStatus::Stopped));
        const qint64 bookOnly = sale(u"E-BOOKONLY"_s);
        FS_VERIFY_OK(e->setSaleStatus(bookOnly, SaleStatus::Open));
        FS_VERIFY_OK(e->setSaleBookOnly(bookOnly, true));
        FS_VERIFY_OK(e->setSaleStatus(sale(u"F-HELD"_s), SaleStatus::Open));
        // Units F-HELD's ledger cannot explain: the reconciler holds it for approval and pauses it.
        FS_VERIFY_OK(e->database().exec(u"UPDATE buckets SET available = available + 3, total = total + 3 "
                                        u"WHERE sku = 'F-HELD'"_s));
        const ReconcileReport report = FS_OK(Reconciler(*e).runPass(0));
        QCOMPARE(report.stillPending, 1);
        for (const Discrepancy &d : report.discrepancies)
            if (d.status == DiscrepancyStatus::PendingApproval)
                pausing = d.id;
    }
    QTRY_COMPARE_WITH_TIMEOUT(w.liveView()->levelsModel()->rowCount(), 7, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!w.liveView()->levelsModel()->samples().at(liveRow(w, u"F-HELD"_s)).pausedBy.isEmpty(),
                             10000);
    QCOMPARE(liveCell(w, u"A-SCHEDULED"_s, SkuLevelsModel::SaleState), u"scheduled"_s);
    QCOMPARE(liveCell(w, u"B-OPEN"_s, SkuLevelsModel::SaleState), u"open"_s);
    QCOMPARE(liveCell(w, u"C-PAUSED"_s, SkuLevelsModel::SaleState), u"paused"_s);
    QCOMPARE(liveCell(w, u"D-STOPPED"_s, SkuLevelsModel::SaleState), u"stopped"_s);
    QCOMPARE(liveCell(w, u"E-BOOKONLY"_s, SkuLevelsModel::SaleState), u"open · book-only"_s);
    QCOMPARE(liveCell(w, u"G-NOSALE"_s, SkuLevelsModel::SaleState), u"no sale"_s);
    QCOMPARE(liveCell(w, u"F-HELD"_s, SkuLevelsModel::SaleState), u"‖ paused by #%1 · open"_s.arg(pausing));
    QVERIFY(liveCell(w, u"F-HELD"_s, SkuLevelsModel::SaleState, Qt::ToolTipRole).contains(u"waits for approval"_s));

    // A click on a row shows its SKU in the chart and the figures.
    QTableView *table = w.liveView()->table();
    const QRect f = table->visualRect(w.liveView()->levelsModel()->index(liveRow(w, u"F-HELD"_s), SkuLevelsModel::Sku));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, f.center());
    QCOMPARE(w.liveView()->currentSku(), u"F-HELD"_s);
    QVERIFY2(w.liveView()->stateText().contains(u"PAUSED by discrepancy #%1"_s.arg(pausing)),
             qPrintable(w.liveView()->stateText()));
    QTRY_VERIFY_WITH_TIMEOUT(w.liveView()->seriesPointCount(LiveView::BookAvailable) > 0, 5000);
    const QRect b = table->visualRect(w.liveView()->levelsModel()->index(liveRow(w, u"B-OPEN"_s), SkuLevelsModel::Sold));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, b.center());
    QCOMPARE(w.liveView()->currentSku(), u"B-OPEN"_s);
    QVERIFY(w.liveView()->stateText().contains(u"<b>open</b>"_s));
    // And the chart's SKU selects its row.
    w.liveView()->setCurrentSku(u"E-BOOKONLY"_s);
    QCOMPARE(table->selectionModel()->selectedRows().value(0).row(), liveRow(w, u"E-BOOKONLY"_s));
    w.liveView()->setCurrentSku(u"F-HELD"_s);
    shoot(&w, u"live.png"_s);
}

void TestUiSaleDay::timesCarryTheirZone()
{
    // Console, wizard and CLI agree: a time without an offset is UTC, and every shown time says so.
    QCOMPARE(ConsoleText::utcTime(0), u"1970-01-01 00:00:00 UTC"_s);
    QVERIFY2(ConsoleText::localHint(0).contains(u"1970-01-01 09:00:00 (UTC+09:00)"_s), qPrintable(ConsoleText::localHint(0)));
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    Console c;
    open(c);
    if (QTest::currentTestFailed())
        return;
    MainWindow &w = *c.window;
    FS_VERIFY_OK(c.engine()->addSku(u"WATCH"_s, 10));
    QTRY_COMPARE_WITH_TIMEOUT(w.liveView()->levelsModel()->rowCount(), 1, 10000);

    LaunchWizard *wizard = w.salesView()->openWizard();
    QVERIFY(wizard);
    wizard->skuField()->setCurrentText(u"WATCH"_s);
    wizard->startNowField()->setChecked(false);
    wizard->noEndField()->setChecked(false);
    QVERIFY(wizard->startField()->displayFormat().contains(u"UTC"_s));
    QCOMPARE(wizard->startField()->timeSpec(), Qt::UTC);
    wizard->startField()->setDateTime(QDateTime(QDate(2030, 1, 1), QTime(20, 0), Qt::UTC));
    wizard->endField()->setDateTime(QDateTime(QDate(2030, 1, 2), QTime(2, 30), Qt::UTC));
    QVERIFY(wizard->startField()->text().contains(u"2030-01-01 20:00 UTC"_s));
    QStringList labels;
    for (QLabel *l : wizard->findChildren<QLabel *>())
        labels << l->text();
    QVERIFY2(labels.contains(u"St&art (UTC):"_s) && labels.contains(u"&End (UTC):"_s), qPrintable(labels.join(u'|')));
    // The local time beside it: 20:00 UTC is 05:00 the next morning in Tokyo.
    QVERIFY2(labels.join(u'|').contains(u"Local time: 2030-01-02 05:00:00 (UTC+09:00)"_s), qPrintable(labels.join(u'|')));
    const SaleRequest r = wizard->request();
    QCOMPARE(r.startMs, QDateTime(QDate(2030, 1, 1), QTime(20, 0), Qt::UTC).toMSecsSinceEpoch());
    QSignalSpy shown(wizard, &LaunchWizard::preflightShown);
    wizard->next();
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 10000);
    QVERIFY2(wizard->planText().contains(u"window 2030-01-01 20:00 UTC → 2030-01-02 02:30 UTC"_s),
             qPrintable(wizard->planText()));
    shoot(wizard, u"launch-wizard-times.png"_s);
    wizard->reject();

    // The CLI reads the same words as the same instant.
    Cli cli;
    QString out, err;
    QTextStream o(&out), e(&err);
    QCOMPARE(cli.run({u"--db"_s, c.book().display(), u"--data-dir"_s, c.dir.path(), u"--redis"_s, u"none"_s, u"--json"_s,
                      u"sale"_s, u"create"_s, u"--sku"_s, u"WATCH"_s, u"--start"_s, u"2030-01-01T20:00:00"_s},
                     o, e),
             0);
    const Sale cliSale = FS_OK(c.engine()->sales().latestFor(u"WATCH"_s)).value();
    QCOMPARE(cliSale.startMs, r.startMs);
    QTRY_COMPARE_WITH_TIMEOUT(w.salesView()->model()->rowCount(), 1, 10000);
    const QModelIndex window = w.salesView()->model()->index(0, SalesModel::Window);
    QCOMPARE(window.data().toString(), u"2030-01-01 20:00 UTC → until stopped"_s);
    QVERIFY(window.data(Qt::ToolTipRole).toString().contains(u"2030-01-02 05:00:00 (UTC+09:00)"_s));

    // The ledger, the discrepancies and the warnings say UTC too.
    w.ledgerView()->showRecent();
    QTRY_VERIFY_WITH_TIMEOUT(w.ledgerView()->model()->rowCount() > 0, 10000);
    const QModelIndex at = w.ledgerView()->model()->index(0, LedgerModel::At);
    QVERIFY2(at.data().toString().endsWith(u" UTC"_s), qPrintable(at.data().toString()));
    QVERIFY(at.data(Qt::ToolTipRole).toString().contains(u"UTC+09:00"_s));
    DiscrepancyModel discrepancies;
    Discrepancy d;
    d.detectedAtMs = 86400000;
    d.resolvedAtMs = 90000000;
    discrepancies.setDiscrepancies({d});
    QCOMPARE(discrepancies.index(0, DiscrepancyModel::DetectedAt).data().toString(), u"1970-01-02 00:00:00 UTC"_s);
    QCOMPARE(discrepancies.index(0, DiscrepancyModel::ResolvedAt).data().toString(), u"1970-01-02 01:00:00 UTC"_s);

    // The chart's time axis is UTC, and shows the date when its window crosses midnight.
    LiveView view;
    view.resize(900, 600);
    view.show();
    view.setWindowMinutes(2);
    const qint64 midnight = QDateTime(QDate(2030, 1, 2), QTime(0, 0), Qt::UTC).toMSecsSinceEpoch();
    for (qint64 t = midnight - 90000; t <= midnight + 20000; t += 1000) {
        LiveSnapshot snap;
        snap.atMs = t;
        snap.health.bookUp = true;
        snap.skus = {SkuSample{u"WATCH"_s, 10, 0, 0, 10, 1, 10, 0, 0}};
        view.addSnapshot(snap);
    }
    const QStringList axis = view.timeAxisLabels();
    QVERIFY2(axis.contains(u"01-02 00:00:00"_s), qPrintable(axis.join(u", "_s)));
    QVERIFY2(axis.first().startsWith(u"01-01 "_s), qPrintable(axis.join(u", "_s)));
    shoot(&view, u"live-midnight.png"_s);
    LiveSnapshot later;
    later.atMs = midnight + 600000;
    later.health.bookUp = true;
    later.skus = {SkuSample{u"WATCH"_s, 10, 0, 0, 10, 1, 10, 0, 0}};
    view.addSnapshot(later);
    for (const QString &label : view.timeAxisLabels())
        QVERIFY2(!label.contains(u'-'), qPrintable(label)); // within one day: times only
}

void TestUiSaleDay::exportAndHelp()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    Console c;
    open(c);
    if (QTest::currentTestFailed())
        return;
    MainWindow &w = *c.window;
    {
        auto e = c.engine();
        FS_VERIFY_OK(e->addSku(u"CSV-1"_s, 1200));
        FS_VERIFY_OK(e->reserve(u"ord-1"_s, u"u1"_s, {{u"CSV-1"_s, 2, {}}}));
        FS_VERIFY_OK(e->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
        QCOMPARE(FS_OK(Reconciler(*e).runPass(0)).stillPending, 1);
    }
    QTemporaryDir out;
    const auto lines = [&](QTableView *view, const QString &name) {
        const QString path = out.filePath(name);
        QString error;
        if (!TableExport::writeCsv(view, path, &error))
            return QStringList{error};
        QFile f(path);
        f.open(QIODevice::ReadOnly);
        return QString::fromUtf8(f.readAll()).split(u"\r\n"_s, Qt::SkipEmptyParts);
    };
    // The Live table: plain numbers (no group separators), the header as shown.
    QTRY_COMPARE_WITH_TIMEOUT(w.liveView()->levelsModel()->rowCount(), 1, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(liveCell(w, u"CSV-1"_s, SkuLevelsModel::Locked, RawRole), u"2"_s, 5000);
    const QStringList live = lines(w.liveView()->table(), u"live.csv"_s);
    QCOMPARE(live.size(), 2);
    QVERIFY2(live.at(0).startsWith(u"SKU,Sale,Available (book),Available (gate)"_s), qPrintable(live.at(0)));
    QVERIFY2(live.at(1).startsWith(u"CSV-1,"_s) && live.at(1).contains(u",1203,"_s), qPrintable(live.at(1)));

    // The ledger: recent activity (refreshed when shown), times ISO 8601 UTC.
    w.tabs()->setCurrentIndex(MainWindow::LedgerTab);
    QTRY_VERIFY_WITH_TIMEOUT(w.ledgerView()->summaryText().startsWith(u"Recent activity"_s), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(w.ledgerView()->model()->rowCount(), 2, 10000);
    const QStringList ledger = lines(w.ledgerView()->table(), u"ledger.csv"_s);
    QVERIFY2(ledger.size() == 3, qPrintable(ledger.join(u'\n'))); // header, the reserve, the initial stock
    QVERIFY2(ledger.at(0).startsWith(u"Row,At,Order,Operation"_s), qPrintable(ledger.at(0)));
    QVERIFY2(ledger.at(1).contains(u"Z,ord-1,RESERVE,CSV-1"_s), qPrintable(ledger.at(1))); // newest first
    QVERIFY2(ledger.at(1).contains(u",-2,2,"_s), qPrintable(ledger.at(1)));

    // The discrepancy list; a cell a spreadsheet would run as a formula is made text.
    w.tabs()->setCurrentIndex(MainWindow::ReconciliationTab); // shown, it lists them again
    QTRY_COMPARE_WITH_TIMEOUT(w.reconciliationView()->model()->rowCount(), 1, 10000);
    const QStringList found = lines(w.reconciliationView()->table(), u"discrepancies.csv"_s);
    QCOMPARE(found.size(), 2);
    // In the order shown: the status before the long proposal.
    QVERIFY2(found.at(0).contains(u"Delta,Status,Proposed correction / action,"_s)
                 && found.at(0).endsWith(u"Resolved by,Resolved at"_s),
             qPrintable(found.at(0)));
    QVERIFY2(found.at(1).contains(u",-5,"_s) && found.at(1).contains(u"pending_approval"_s), qPrintable(found.at(1)));

    // Copy: the selected rows, tab-separated, on the clipboard (Ctrl+C in the table).
    QTableView *table = w.liveView()->table();
    w.tabs()->setCurrentIndex(MainWindow::LiveTab);
    table->selectRow(0);
    table->setFocus();
    QGuiApplication::clipboard()->clear();
    QTest::keyClick(table, Qt::Key_C, Qt::ControlModifier);
    const QString copied = QGuiApplication::clipboard()->text();
    QVERIFY2(copied.startsWith(u"SKU\tSale\t"_s) && copied.contains(u"\nCSV-1\t"_s) && copied.contains(u"\t1203\t"_s),
             qPrintable(copied));

    // Help: the README's sections, as built in, and About with version and licence.
    QStringList menu;
    for (QAction *a : w.helpMenu()->actions())
        menu << a->text();
    QVERIFY2(menu.contains(u"README: The console"_s) && menu.contains(u"&About FlashStock"_s), qPrintable(menu.join(u'|')));
    ReadmeDialog *readme = w.showReadme(u"Reconciliation and approval"_s);
    QVERIFY(readme);
    for (const QString &item : menu) // every section Help offers is one of the README's
        if (item.startsWith(u"README: "_s))
            QVERIFY2(readme->sections().contains(item.mid(8)), qPrintable(item));
    QCOMPARE(readme->currentSection(), u"Reconciliation and approval"_s);
    shoot(readme, u"help-readme.png"_s);
    readme->close();
    QMessageBox *about = w.showAbout();
    QVERIFY(about->text().contains(u"FlashStock console 9.8.7"_s));
    QVERIFY(about->text().contains(u"<b>Licence:</b> GPL-3.0-or-later"_s));
    shoot(about, u"help-about.png"_s);
    about->close();
}

void TestUiSaleDay::failedConnectionLeavesNothingStale()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    Console c;
    open(c);
    if (QTest::currentTestFailed())
        return;
    MainWindow &w = *c.window;
    FS_VERIFY_OK(c.engine()->addSku(u"LIVE-1"_s, 77));
    QTRY_COMPARE_WITH_TIMEOUT(w.liveView()->levelsModel()->rowCount(), 1, 10000);
    QVERIFY(w.windowTitle().contains(u"flashstock.db"_s));
    QVERIFY(!ProfileSettings::exists(c.dir.path()));

    // A book that is not a FlashStock database: the open fails.
    QFile foreign(c.dir.filePath(u"foreign.db"_s));
    QVERIFY(foreign.open(QIODevice::WriteOnly));
    foreign.write("not a database at all, 100% garbage");
    foreign.close();
    EngineProfile bad = c.profile();
    bad.dbUrl = u"sqlite:///"_s + foreign.fileName();
    QSignalSpy opened(w.session()->worker(), &EngineWorker::opened);
    w.reopen(bad, true);
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 10000);
    QTRY_VERIFY(w.windowTitle().contains(u"not connected"_s));
    QVERIFY2(!w.windowTitle().contains(u"flashstock.db"_s), qPrintable(w.windowTitle()));
    QCOMPARE(w.liveView()->levelsModel()->rowCount(), 0); // no stale figures
    QCOMPARE(w.skuView()->model()->rowCount(), 0);
    QCOMPARE(w.salesView()->model()->rowCount(), 0);
    QCOMPARE(w.ledgerView()->model()->rowCount(), 0);
    QVERIFY2(w.liveView()->emptyStateText().contains(u"Not connected"_s), qPrintable(w.liveView()->emptyStateText()));
    QVERIFY(w.bookStatusText().contains(u"not open"_s));
    QVERIFY2(!w.gateStatusText().contains(u"connecting"_s), qPrintable(w.gateStatusText()));
    QVERIFY(!ProfileSettings::exists(c.dir.path())); // the failed profile is not saved
    QTest::qWait(1500); // no sample of the engine before brings the figures back
    QCOMPARE(w.liveView()->levelsModel()->rowCount(), 0);
    shoot(&w, u"connection-failed.png"_s);
    for (QMessageBox *box : w.findChildren<QMessageBox *>())
        box->close();

    // A malformed gate URL: refused at once, never "connecting..." for ever.
    EngineProfile badGate = c.profile();
    badGate.redisUrl = u"redis://cache:notaport"_s;
    opened.clear();
    w.reopen(badGate, true);
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 10000);
    QTRY_VERIFY2(w.gateStatusText().contains(u"not connected"_s), qPrintable(w.gateStatusText()));
    QVERIFY(!ProfileSettings::exists(c.dir.path()));
    for (QMessageBox *box : w.findChildren<QMessageBox *>())
        box->close();

    // The good profile again: it opens, shows its figures, and is saved now.
    opened.clear();
    w.reopen(c.profile(), true);
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(w.liveView()->levelsModel()->rowCount(), 1, 10000);
    QVERIFY(w.windowTitle().contains(u"flashstock.db"_s));
    QVERIFY(ProfileSettings::exists(c.dir.path()));
    QTRY_VERIFY_WITH_TIMEOUT(w.gateStatusText().contains(u"Gate: up"_s), 10000);
}

void TestUiSaleDay::emptyStatesAndMaskedPassword()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    Console c;
    open(c);
    if (QTest::currentTestFailed())
        return;
    MainWindow &w = *c.window;
    // First start: no SKU. The Live view says what to do, and its buttons lead there.
    QTRY_VERIFY_WITH_TIMEOUT(w.liveView()->emptyStateText().contains(u"No SKUs yet"_s), 10000);
    QVERIFY(w.liveView()->emptyStateText().contains(u"Add SKU"_s));
    QVERIFY(w.liveView()->emptyStateText().contains(u"New sale"_s));
    QTRY_VERIFY_WITH_TIMEOUT(w.ledgerView()->summaryText().startsWith(u"No ledger rows yet"_s), 10000);
    shoot(&w, u"first-start.png"_s);
    QPushButton *addSku = nullptr;
    for (QPushButton *b : w.liveView()->findChildren<QPushButton *>())
        if (b->text() == u"&Add a SKU…"_s)
            addSku = b;
    QVERIFY(addSku && addSku->isVisible());
    addSku->click();
    QCOMPARE(w.tabs()->currentWidget(), w.skuView());
    auto *dialog = w.skuView()->findChild<AddSkuDialog *>();
    QVERIFY(dialog && dialog->isVisible());
    dialog->reject();

    // Activity appears in the ledger view before any search.
    FS_VERIFY_OK(c.engine()->addSku(u"FIRST"_s, 5));
    QTRY_COMPARE_WITH_TIMEOUT(w.liveView()->levelsModel()->rowCount(), 1, 10000);
    w.ledgerView()->showRecent();
    QTRY_COMPARE_WITH_TIMEOUT(w.ledgerView()->model()->rowCount(), 1, 10000);
    QVERIFY(w.ledgerView()->summaryText().startsWith(u"Recent activity"_s));

    // The gate goes down: "Gate − book" says n/a, not a number.
    c.redis.stop();
    QTRY_VERIFY_WITH_TIMEOUT(w.gateStatusText().contains(u"DOWN"_s), 15000);
    QTRY_COMPARE_WITH_TIMEOUT(liveCell(w, u"FIRST"_s, SkuLevelsModel::Drift), u"n/a"_s, 10000);
    QCOMPARE(liveCell(w, u"FIRST"_s, SkuLevelsModel::GateAvailable), u"n/a"_s);
    shoot(&w, u"live-gate-down.png"_s);

    // The book down: no figures, no epoch on the chart.
    LiveView view;
    view.resize(900, 600);
    view.show();
    LiveSnapshot down;
    down.atMs = QDateTime::currentMSecsSinceEpoch();
    down.health.bookDetail = u"unable to open database file"_s;
    view.addSnapshot(down);
    QVERIFY2(view.emptyStateText().contains(u"does not answer"_s), qPrintable(view.emptyStateText()));
    for (const QString &label : view.timeAxisLabels())
        QVERIFY2(!label.contains(u"1970"_s), qPrintable(label));
    shoot(&view, u"live-book-down.png"_s);

    // The wizard shows no literal ampersand: every label with a mnemonic has its buddy.
    LaunchWizard *wizard = w.salesView()->openWizard();
    QVERIFY(wizard);
    for (QLabel *label : wizard->findChildren<QLabel *>()) {
        if (label->textFormat() == Qt::RichText || !label->text().contains(u'&'))
            continue;
        QVERIFY2(label->buddy(), qPrintable(label->text()));
    }
    shoot(wizard, u"launch-wizard-sale.png"_s);
    wizard->reject();

    // The Connection dialog masks a typed password and never saves it.
    ProfileDialog profile(c.profile());
    profile.show();
    profile.bookField()->clear();
    QTest::keyClicks(profile.bookField(), u"postgresql://ops:hunter2@db.example:5432/flash"_s);
    QVERIFY2(!profile.bookField()->text().contains(u"hunter2"_s), qPrintable(profile.bookField()->text()));
    QCOMPARE(profile.bookPasswordField()->echoMode(), QLineEdit::Password);
    QCOMPARE(profile.bookPasswordField()->text(), u"hunter2"_s);
    QCOMPARE(profile.bookField()->text(), u"postgresql://ops@db.example:5432/flash"_s);
    QVERIFY(profile.profile().dbUrl.contains(u"hunter2"_s)); // for this session
    shoot(&profile, u"connection-dialog.png"_s);
    QVERIFY(ProfileSettings::save(profile.profile()));
    QFile ini(ProfileSettings::filePath(c.dir.path()));
    QVERIFY(ini.open(QIODevice::ReadOnly));
    QVERIFY(!ini.readAll().contains("hunter2"));
}

QTEST_MAIN(TestUiSaleDay)
#include "tst_ui_saleday.moc"
