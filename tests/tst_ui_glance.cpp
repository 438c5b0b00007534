// The console during the minutes that matter, offscreen, on a real SQLite book in a
// temporary data dir with a real redis-server as the gate: figures true at a glance (the
// last second's rates and their peak, a chart that follows a short sale, the Live split
// kept across a restart), views that stay current (a discrepancy another process finds
// appears in an open Reconciliation view, and one that pauses a SKU is announced on every
// tab), an order found in the ledger with what the server's GET shows, and the rough edges
// (the Add SKU dialog, the Connection dialog's Tab order, CSV export, the embedded gate left
// behind). Time is the test's: snapshots carry the clock it moves. With FLASHSTOCK_SHOT_DIR
// set, the windows driven are saved as PNG there.

#include "ConsoleSession.h"
#include "ConsoleText.h"
#include "Engine.h"
#include "EngineWorker.h"
#include "LedgerView.h"
#include "LiveView.h"
#include "MainWindow.h"
#include "ProfileDialog.h"
#include "ProfileSettings.h"
#include "ReconciliationView.h"
#include "SkuDialogs.h"
#include "TableExport.h"
#include "gate/EmbeddedRedis.h"
#include "gate/RedisConnection.h"
#include "models/DiscrepancyModel.h"
#include "models/LedgerModel.h"
#include "models/ModelRoles.h"
#include "reconcile/Reconciler.h"
#include "store/Database.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"
#include "support/TestChecks.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QtTest>

#include <csignal>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// A data dir with a SQLite book, a redis-server as the gate, and engines of the test on both.
struct BookAndGate {
    QTemporaryDir dir;
    RedisFixture redis;

    EngineProfile profile() const { return EngineProfile{dir.path(), {}, redis.url().toString(), u"tester"_s}; }
    DbUrl url() const { return DbUrl::parse(u"sqlite:///"_s + dir.filePath(u"flashstock.db"_s)).value(); }
    /// An engine of the test, another process as far as the console knows (source `test`).
    std::unique_ptr<Engine> engine() const
    {
        auto e = Engine::open(EngineOptions{url(), redis.url(), Actor{u"tester"_s, u"test"_s}});
        return e ? std::move(*e) : nullptr;
    }
    /// Starts the gate, then engine(); nullptr if either fails (redis.errorString() says why).
    std::unique_ptr<Engine> begin() { return redis.start() ? engine() : nullptr; }
};

/// Shows `w` and waits (up to 10 s) until its book is open.
bool shownAndOpen(MainWindow &w)
{
    w.show();
    return QTest::qWaitFor([&w] { return w.session()->connection().bookOpen; }, 10000);
}

/// Saves `widget` as `name` into FLASHSTOCK_SHOT_DIR, when set.
void shoot(QWidget *widget, const QString &name)
{
    if (!qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR"))
        return;
    QCoreApplication::processEvents();
    QVERIFY(widget->grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(name)));
}

/// A sample of the console's worker, stamped with the test's clock `atMs` instead of the wall's.
/// Opens `profile` in `session` and waits up to 15 s for its EngineWorker::opened, counted by
/// `opened` (the worker's thread may send it before a QSignalSpy::wait() would begin).
bool openAndWait(ConsoleSession &session, QSignalSpy &opened, const EngineProfile &profile)
{
    const qsizetype before = opened.count();
    session.open(profile);
    return QTest::qWaitFor([&] { return opened.count() > before; }, 15000);
}

std::optional<LiveSnapshot> sampleAt(ConsoleSession &session, qint64 atMs)
{
    QSignalSpy sampled(session.worker(), &EngineWorker::sampled);
    // The session takes a new sample once the answer to the last one reached it (queued).
    QDeadlineTimer accepted(5000);
    while (!session.sample()) {
        if (accepted.hasExpired())
            return std::nullopt;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    }
    if (sampled.isEmpty() && !sampled.wait(10000)) // it may be in before the wait begins
        return std::nullopt;
    LiveSnapshot snap = sampled.first().first().value<LiveSnapshot>();
    snap.atMs = atMs;
    return snap;
}

/// A snapshot of one SKU at `atMs` with `available` of `total` units, the rest sold.
LiveSnapshot levelsAt(qint64 atMs, qint64 available, qint64 total)
{
    LiveSnapshot snap;
    snap.atMs = atMs;
    snap.health.bookUp = true;
    SkuSample s;
    s.sku = u"FLASH"_s;
    s.available = available;
    s.sold = total - available;
    s.total = total;
    snap.skus << s;
    return snap;
}

/// A negative drift on `sku` that the reconciler cannot explain: it pauses the SKU.
void driftAndReconcile(Engine &engine, const QString &sku, int units)
{
    FS_VERIFY_OK(engine.database().exec(u"UPDATE buckets SET available = available + %1, total = total + %1 "
                                        u"WHERE sku = '%2'"_s.arg(units).arg(sku)));
    FS_VERIFY_OK(Reconciler(engine).runPass(0));
}

/// The id of the pending discrepancy of `sku`, or 0.
qint64 pendingOf(Engine &engine, const QString &sku)
{
    for (const Discrepancy &d : Reconciler(engine).list().value_or(QList<Discrepancy>{}))
        if (d.sku == sku && d.status == DiscrepancyStatus::PendingApproval)
            return d.id;
    return 0;
}

/// The id of the discrepancy selected in the view, or 0.
qint64 selectedId(ReconciliationView &view)
{
    const QModelIndexList rows = view.table()->selectionModel()->selectedRows(DiscrepancyModel::Id);
    return rows.isEmpty() ? 0 : rows.first().data(RawRole).toLongLong();
}

QStringList csvLines(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll()).split(u"\r\n"_s, Qt::SkipEmptyParts);
}

} // namespace

class TestUiGlance : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { std::signal(SIGPIPE, SIG_IGN); }
    void takenPerSecondIsTheLastSecond();
    void chartFollowsAShortSale();
    void liveSplitSurvivesARestart();
    void reconciliationRefreshesByItself();
    void newPauseIsAnnouncedOnEveryTab();
    void ledgerShowsTheOrderAsTheServerDoes();
    void addSkuDialogKeepsItsFields();
    void connectionTabOrderFollowsTheForm();
    void ledgerExportHasOneFieldPerValue();
    void reconciliationSaysTheLevel();
    void switchingAwayStopsTheEmbeddedGate();
    void embeddedGateOthersUseKeepsRunning();
};

void TestUiGlance::takenPerSecondIsTheLastSecond()
{
    // A crowd takes 240 units between two samples a second apart: one second after the
    // burst, "Taken per second" says 240, not the 48 a five-second average would; a second
    // later it says 0 and the peak keeps the 240 with its time.
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    BookAndGate b;
    auto engine = b.begin();
    QVERIFY2(engine, qPrintable(b.redis.errorString()));
    FS_VERIFY_OK(engine->addSku(u"FLASH"_s, 1000));
    ConsoleSession session;
    QSignalSpy opened(session.worker(), &EngineWorker::opened);
    QVERIFY(openAndWait(session, opened, b.profile()));
    QVERIFY(opened.first().first().value<ConnectionInfo>().bookOpen);
    LiveView live;
    live.resize(1280, 700);
    live.show();
    const qint64 t0 = QDateTime::currentMSecsSinceEpoch();
    for (int s = 0; s < 5; ++s) { // five quiet seconds
        auto snap = sampleAt(session, t0 + s * 1000);
        QVERIFY(snap);
        live.addSnapshot(*snap);
    }
    QCOMPARE(live.rates().value(u"FLASH"_s).taken, 0.0);
    for (int i = 0; i < 120; ++i)
        QCOMPARE(FS_OK(engine->reserve(u"b%1"_s.arg(i), u"u%1"_s.arg(i), {{u"FLASH"_s, 2, {}}})).outcome,
                 Outcome::Reserved);
    auto burst = sampleAt(session, t0 + 5000);
    QVERIFY(burst);
    QCOMPARE(burst->skus.first().available, 760);
    live.addSnapshot(*burst);
    const double trueRate = 240.0; // units taken in the last second of the test's clock
    const SkuRates after = live.rates().value(u"FLASH"_s);
    QVERIFY2(qAbs(after.taken - trueRate) <= 0.1 * trueRate, qPrintable(QString::number(after.taken)));
    QVERIFY2(live.takenText().startsWith(u"240.0"_s), qPrintable(live.takenText()));
    shoot(&live, u"glance-burst.png"_s);

    auto quiet = sampleAt(session, t0 + 6000);
    QVERIFY(quiet);
    live.addSnapshot(*quiet);
    const SkuRates later = live.rates().value(u"FLASH"_s);
    QCOMPARE(later.taken, 0.0);
    QCOMPARE(later.takenPeak, 240.0);
    QCOMPARE(later.takenPeakAtMs, t0 + 5000);
    const QString peakAt = QDateTime::fromMSecsSinceEpoch(t0 + 5000, Qt::UTC).toString(u"HH:mm:ss"_s);
    QVERIFY2(live.takenText().contains(u"peak 240.0 at %1 UTC"_s.arg(peakAt)), qPrintable(live.takenText()));
}

void TestUiGlance::chartFollowsAShortSale()
{
    // Fourteen quiet minutes, then a sale of forty seconds: the time axis begins a little
    // before the sale, not fifteen minutes back.
    LiveView live;
    live.resize(1280, 700);
    live.show();
    const qint64 t0 = 1'800'000'000'000;
    qint64 t = t0;
    for (; t < t0 + 14 * 60000; t += 10000)
        live.addSnapshot(levelsAt(t, 500, 500));
    const qint64 saleStart = t;
    for (int s = 0; s <= 40; ++s, t += 1000)
        live.addSnapshot(levelsAt(t, 500 - 10 * s, 500));
    const qint64 now = t - 1000;
    QVERIFY(live.followsSale());
    auto [from, to] = live.timeAxisRange();
    QCOMPARE(qint64(to), now);
    // The forty seconds of the sale and a tenth more before it.
    QCOMPARE(to - from, 1.1 * double(now - saleStart));
    QVERIFY(live.seriesPointCount(LiveView::BookAvailable) >= 41);
    shoot(&live, u"glance-follow.png"_s);
    // Off: the whole window.
    live.setFollowsSale(false);
    std::tie(from, to) = live.timeAxisRange();
    QCOMPARE(to - from, 15.0 * 60000);
    // A console just started: from its oldest sample, moving or not.
    LiveView fresh;
    for (qint64 s = 0; s < 12; ++s)
        fresh.addSnapshot(levelsAt(t0 + s * 1000, 500 - s, 500));
    std::tie(from, to) = fresh.timeAxisRange();
    QCOMPARE(from, double(t0));
    QCOMPARE(to, double(t0 + 11000));
}

void TestUiGlance::liveSplitSurvivesARestart()
{
    // The operator gives the SKU table more room; the next start has it where it was left,
    // kept in the data dir's settings (the user's alone). Where it was left: within a few
    // pixels, as the figures above the split may lay out a line differently.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const EngineProfile profile{dir.path(), {}, u"none"_s, u"tester"_s};
    QList<int> moved;
    {
        MainWindow w(profile);
        QVERIFY(shownAndOpen(w));
        QSplitter *split = w.liveView()->splitter();
        const QList<int> before = split->sizes();
        QCOMPARE(before.size(), 2);
        const int total = before[0] + before[1];
        QSignalSpy sampled(w.session()->worker(), &EngineWorker::sampled);
        QVERIFY(sampled.wait(10000)); // the first figures are in, the view laid out with them
        QCoreApplication::processEvents();
        split->setSizes({total / 3, total - total / 3}); // the table takes two thirds
        QVERIFY(sampled.wait(10000));
        QCoreApplication::processEvents();
        moved = split->sizes();
        QVERIFY2(moved[1] > before[1] + 100, qPrintable(u"%1 -> %2"_s.arg(before[1]).arg(moved[1])));
        w.close();
    }
    const QFileInfo ini(ProfileSettings::filePath(dir.path()));
    QVERIFY(ini.exists());
    QCOMPARE(ini.permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther | QFileDevice::WriteGroup
                                  | QFileDevice::WriteOther),
             QFileDevice::Permissions());
    MainWindow again(profile);
    QVERIFY(shownAndOpen(again));
    QSignalSpy sampled(again.session()->worker(), &EngineWorker::sampled);
    QVERIFY(sampled.wait(10000)); // laid out as the first was when it closed
    QCoreApplication::processEvents();
    const QList<int> restored = again.liveView()->splitter()->sizes();
    QCOMPARE(restored.size(), 2);
    for (int i : {0, 1})
        QVERIFY2(qAbs(restored[i] - moved[i]) <= 8,
                 qPrintable(u"left at %1/%2, restored at %3/%4"_s.arg(moved[0]).arg(moved[1]).arg(restored[0]).arg(
                     restored[1])));
}

void TestUiGlance::reconciliationRefreshesByItself()
{
    // The Reconciliation view is open on discrepancy #1 with the filter on All; another
    // process finds a new one (a gate above the book, healed: nothing pauses, so only the
    // view's own refresh can bring it): it appears within 5 s, #1 still selected, the
    // filter kept.
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    BookAndGate b;
    auto other = b.begin();
    QVERIFY2(other, qPrintable(b.redis.errorString()));
    FS_VERIFY_OK(other->addSku(u"OLD"_s, 100));
    FS_VERIFY_OK(other->addSku(u"NEW"_s, 100));
    driftAndReconcile(*other, u"OLD"_s, 3);
    const qint64 first = pendingOf(*other, u"OLD"_s);
    QVERIFY(first > 0);
    MainWindow w(b.profile());
    QVERIFY(shownAndOpen(w));
    w.tabs()->setCurrentIndex(MainWindow::ReconciliationTab);
    ReconciliationView &view = *w.reconciliationView();
    view.setStatusFilter(QString());
    QTRY_VERIFY_WITH_TIMEOUT(view.select(first), 10000);
    QCOMPARE(selectedId(view), first);

    QElapsedTimer found;
    FS_VERIFY_OK(b.redis.command({"HINCRBY", "fs:{NEW}:gate", "available", "4"}));
    const ReconcileReport pass = FS_OK(Reconciler(*other).runPass(0));
    found.start();
    QCOMPARE(pass.discrepancies.size(), 1);
    QCOMPARE(pass.discrepancies.first().kind, DiscrepancyKind::GateExcess);
    const qint64 second = pass.discrepancies.first().id;
    QVERIFY(second > first);
    QTRY_VERIFY_WITH_TIMEOUT(view.model()->rowOf(second) >= 0, 5000);
    qInfo("listed %lld ms after the other process found it", found.elapsed());
    QCOMPARE(selectedId(view), first);
    QCOMPARE(view.statusFilter(), QString());
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::ReconciliationTab));
    // Listed again with nothing new: the rows stay (no reset), and so does the selection.
    QSignalSpy listed(w.session()->worker(), &EngineWorker::discrepanciesListed);
    QSignalSpy resets(view.model(), &QAbstractItemModel::modelReset);
    QVERIFY(listed.wait(10000));
    QVERIFY(listed.wait(10000));
    QCOMPARE(resets.count(), 0);
    QCOMPARE(selectedId(view), first);
}

void TestUiGlance::newPauseIsAnnouncedOnEveryTab()
{
    // The operator watches the Ledger; a reconcile pass of another process pauses a SKU:
    // the banner above the tabs says which discrepancy pauses which SKU, and its button
    // opens it in Reconciliation. Pauses found before the console connected are no news.
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    BookAndGate b;
    auto other = b.begin();
    QVERIFY2(other, qPrintable(b.redis.errorString()));
    FS_VERIFY_OK(other->addSku(u"CALM"_s, 100));
    FS_VERIFY_OK(other->addSku(u"HOT"_s, 100));
    driftAndReconcile(*other, u"CALM"_s, 2);
    MainWindow w(b.profile());
    w.resize(1280, 800);
    QVERIFY(shownAndOpen(w));
    w.tabs()->setCurrentIndex(MainWindow::LedgerTab);
    QSignalSpy sampled(w.session()->worker(), &EngineWorker::sampled);
    QVERIFY(sampled.wait(10000));
    QVERIFY(sampled.wait(10000));
    QCOMPARE(w.pauseBannerText(), QString());

    driftAndReconcile(*other, u"HOT"_s, 5);
    const qint64 id = pendingOf(*other, u"HOT"_s);
    QVERIFY(id > 0);
    QTRY_VERIFY_WITH_TIMEOUT(!w.pauseBannerText().isEmpty(), 5000);
    QVERIFY2(w.pauseBannerText().contains(u"#%1</b> pauses <b>HOT</b>"_s.arg(id)), qPrintable(w.pauseBannerText()));
    QVERIFY(!w.pauseBannerText().contains(u"CALM"_s));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::LedgerTab));
    shoot(&w, u"glance-announced.png"_s);
    QPushButton *openIt = nullptr;
    for (QPushButton *button : w.findChildren<QPushButton *>())
        if (button->text() == u"Open in Reconciliation"_s)
            openIt = button;
    QVERIFY(openIt);
    openIt->click();
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::ReconciliationTab));
    QTRY_COMPARE_WITH_TIMEOUT(selectedId(*w.reconciliationView()), id, 5000);
    // Decided, it no longer pauses: the banner goes.
    Reconciler reconciler(*other);
    FS_VERIFY_OK(test::approveAsShown(reconciler, id, test::by(u"tester"_s), u"restored as the ledger explains"_s,
                                      {u"tester"_s}));
    QCOMPARE(pendingOf(*other, u"HOT"_s), 0);
    QTRY_COMPARE_WITH_TIMEOUT(w.pauseBannerText(), QString(), 5000);
}

void TestUiGlance::ledgerShowsTheOrderAsTheServerDoes()
{
    // An order search shows what GET /v1/orders/{order} shows: status, buyer, each line's
    // gate token, when it was created and when its hold expires, the payment.
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    BookAndGate b;
    auto other = b.begin();
    QVERIFY2(other, qPrintable(b.redis.errorString()));
    FS_VERIFY_OK(other->addSku(u"MUG"_s, 10));
    FS_VERIFY_OK(other->reserve(u"ord-7"_s, u"buyer-42"_s, {{u"MUG"_s, 2, {}}}));
    FS_VERIFY_OK(other->confirm(u"ord-7"_s, u"pay-7781"_s));
    FS_VERIFY_OK(other->reserve(u"ord-8"_s, u"buyer-43"_s, {{u"MUG"_s, 1, {}}}));
    const OrderView paid = FS_OK(other->book().order(u"ord-7"_s));
    const OrderView pending = FS_OK(other->book().order(u"ord-8"_s));
    QVERIFY(!paid.lines.first().token.isEmpty());
    MainWindow w(b.profile());
    QVERIFY(shownAndOpen(w));
    w.tabs()->setCurrentIndex(MainWindow::LedgerTab);
    LedgerView &ledger = *w.ledgerView();
    ledger.search(LedgerSearchMode::Order, u"ord-7"_s);
    QTRY_VERIFY_WITH_TIMEOUT(!ledger.orderText().isEmpty(), 10000);
    QString shown = ledger.orderText();
    for (const QString &expected : {u"PAID"_s, u"buyer-42"_s, u"pay-7781"_s, paid.lines.first().token,
                                    u"MUG × 2"_s, ConsoleText::utcTime(paid.createdAtMs),
                                    ConsoleText::utcTime(paid.expiresAtMs)})
        QVERIFY2(shown.contains(expected), qPrintable(expected + u" not in "_s + shown));
    shoot(&w, u"glance-order.png"_s);
    ledger.search(LedgerSearchMode::Order, u"ord-8"_s);
    QTRY_VERIFY_WITH_TIMEOUT(ledger.orderText().contains(u"buyer-43"_s), 10000);
    shown = ledger.orderText();
    QVERIFY(shown.contains(u"PENDING"_s));
    QVERIFY(shown.contains(ConsoleText::utcTime(pending.expiresAtMs)));
    QVERIFY(shown.contains(pending.lines.first().token));
    // A SKU search shows no order.
    ledger.search(LedgerSearchMode::Sku, u"MUG"_s);
    QTRY_VERIFY_WITH_TIMEOUT(ledger.summaryText().contains(u"of SKU MUG"_s), 10000);
    QCOMPARE(ledger.orderText(), QString());
}

void TestUiGlance::addSkuDialogKeepsItsFields()
{
    // A long "what will change" text wraps over several lines: the dialog grows, and no
    // field is squashed below the height it needs.
    AddSkuDialog dialog({u"EXISTING"_s}, u"an-operator-with-a-rather-long-name"_s);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    const int fieldHeight = dialog.skuField()->height();
    const int dialogHeight = dialog.height();
    dialog.skuField()->setText(u"PHONE-X-FLASH-SALE-OF-THE-YEAR-WITH-A-NAME-LONG-ENOUGH-TO-WRAP"_s);
    dialog.stockField()->setValue(2'000'000'000);
    dialog.bucketsField()->setValue(512);
    QCoreApplication::processEvents();
    QVERIFY(dialog.summary().size() > 200);
    shoot(&dialog, u"glance-add-sku.png"_s);
    for (QWidget *field : {static_cast<QWidget *>(dialog.skuField()), static_cast<QWidget *>(dialog.stockField()),
                           static_cast<QWidget *>(dialog.bucketsField())})
        QVERIFY2(field->height() >= field->minimumSizeHint().height() && field->height() >= fieldHeight,
                 qPrintable(u"%1: %2 high, needs %3"_s.arg(QString::fromLatin1(field->metaObject()->className()))
                                .arg(field->height())
                                .arg(field->minimumSizeHint().height())));
    QVERIFY(dialog.height() > dialogHeight);
    // Every line of the summary is inside the dialog.
    auto *summary = dialog.findChildren<QLabel *>().last();
    QVERIFY(summary->wordWrap());
    QVERIFY2(summary->height() >= summary->heightForWidth(summary->width()),
             qPrintable(u"%1 < %2"_s.arg(summary->height()).arg(summary->heightForWidth(summary->width()))));
}

void TestUiGlance::connectionTabOrderFollowsTheForm()
{
    // Tab from the book's URL goes to its password, then on down the form.
    ProfileDialog dialog(EngineProfile{u"/tmp/fs-x"_s, u"postgresql://ops@db:5432/book"_s, u"redis://cache:6379"_s,
                                       u"ops"_s});
    dialog.show();
    dialog.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&dialog));
    dialog.bookField()->setFocus();
    const QList<QWidget *> expected{dialog.bookPasswordField(), dialog.gateModeField(), dialog.gateField(),
                                    dialog.gatePasswordField(), dialog.operatorField()};
    for (QWidget *next : expected) {
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QCOMPARE(QApplication::focusWidget(), next);
    }
}

void TestUiGlance::ledgerExportHasOneFieldPerValue()
{
    // CSV of the ledger: "after" levels in three fields, an adjustment in its own fields and
    // empty (not 0) for order operations; the file is the user's alone, also when written over.
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    BookAndGate b;
    auto engine = b.begin();
    QVERIFY2(engine, qPrintable(b.redis.errorString()));
    FS_VERIFY_OK(engine->addSku(u"CSV"_s, 50));
    FS_VERIFY_OK(engine->restock(u"CSV"_s, 7, u"delivery, 4711"_s));
    FS_VERIFY_OK(engine->reserve(u"o1"_s, u"u1"_s, {{u"CSV"_s, 3, {}}}));
    LedgerModel model;
    model.setRows(FS_OK(engine->book().ledgerOfSku(u"CSV"_s)));
    QTableView view;
    view.setModel(&model);
    QTemporaryDir out;
    const QString path = out.filePath(u"ledger.csv"_s);
    {
        QFile loose(path); // a file others may read, written over
        QVERIFY(loose.open(QIODevice::WriteOnly));
        loose.write("old\n");
        loose.close();
        QVERIFY(loose.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup
                                     | QFileDevice::ReadOther));
    }
    QString error;
    QVERIFY2(TableExport::writeCsv(&view, path, &error), qPrintable(error));
    QCOMPARE(QFileInfo(path).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
             QFileDevice::Permissions());
    const QStringList lines = csvLines(path);
    QCOMPARE(lines.size(), 4); // header, initial, restock, reserve
    QVERIFY2(lines[0].contains(u",After available,After locked,After sold,Token,"_s), qPrintable(lines[0]));
    QVERIFY2(lines[0].endsWith(u",Adjustment kind,Adjustment units,Discrepancy,Reason"_s), qPrintable(lines[0]));
    QVERIFY2(lines[2].contains(u",57,0,0,"_s) && lines[2].endsWith(u",restock,7,,\"delivery, 4711\""_s),
             qPrintable(lines[2]));
    QVERIFY2(lines[3].contains(u",54,3,0,"_s) && lines[3].endsWith(u",,,,"_s), qPrintable(lines[3]));
    // A new file, too.
    const QString fresh = out.filePath(u"fresh.csv"_s);
    QVERIFY(TableExport::writeCsv(&view, fresh));
    QCOMPARE(QFileInfo(fresh).permissions() & ~(QFileDevice::ReadUser | QFileDevice::WriteUser),
             QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

void TestUiGlance::reconciliationSaysTheLevel()
{
    // Book and Ledger figures name the level they count: available for one SKU, locked for
    // another, as the reconciler found them and the book keeps them.
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    BookAndGate b;
    auto engine = b.begin();
    QVERIFY2(engine, qPrintable(b.redis.errorString()));
    FS_VERIFY_OK(engine->addSku(u"AVAIL"_s, 100));
    FS_VERIFY_OK(engine->addSku(u"HELD"_s, 100));
    FS_VERIFY_OK(engine->reserve(u"h1"_s, u"u1"_s, {{u"HELD"_s, 3, {}}}));
    FS_VERIFY_OK(engine->database().exec(
        u"UPDATE buckets SET available = available + 4, total = total + 4 WHERE sku = 'AVAIL'"_s));
    FS_VERIFY_OK(engine->database().exec(u"UPDATE buckets SET locked = locked + 2, total = total + 2 WHERE sku = 'HELD'"_s));
    FS_VERIFY_OK(Reconciler(*engine).runPass(0));
    DiscrepancyModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setDiscrepancies(FS_OK(Reconciler(*engine).list())); // as the book keeps them
    QCOMPARE(model.headerData(DiscrepancyModel::Level, Qt::Horizontal).toString(), u"Level"_s);
    QCOMPARE(model.headerData(DiscrepancyModel::Book, Qt::Horizontal).toString(), u"Book (found)"_s);
    QCOMPARE(model.headerData(DiscrepancyModel::Ledger, Qt::Horizontal).toString(), u"Ledger (explains)"_s);
    const auto cells = [&](const QString &sku) {
        for (int row = 0; row < model.rowCount(); ++row)
            if (model.index(row, DiscrepancyModel::Sku).data(RawRole).toString() == sku)
                return QStringList{model.index(row, DiscrepancyModel::Level).data().toString(),
                                   model.index(row, DiscrepancyModel::Book).data().toString(),
                                   model.index(row, DiscrepancyModel::Ledger).data().toString()};
        return QStringList{};
    };
    QCOMPARE(cells(u"AVAIL"_s), (QStringList{u"available"_s, u"104"_s, u"100"_s}));
    QCOMPARE(cells(u"HELD"_s), (QStringList{u"locked"_s, u"5"_s, u"3"_s}));
}

void TestUiGlance::switchingAwayStopsTheEmbeddedGate()
{
    // The console started the data dir's redis-server for its embedded defaults; File >
    // Connection to a book-only profile stops it, and says so.
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ConsoleSession session;
    QSignalSpy opened(session.worker(), &EngineWorker::opened);
    QVERIFY(openAndWait(session, opened, EngineProfile{dir.path(), {}, {}, u"tester"_s}));
    QVERIFY(opened.last().first().value<ConnectionInfo>().bookOpen);
    EmbeddedRedis embedded(dir.path());
    QVERIFY(embedded.status().running);
    QVERIFY(openAndWait(session, opened, EngineProfile{dir.path(), {}, u"none"_s, u"tester"_s}));
    const ConnectionInfo info = opened.last().first().value<ConnectionInfo>();
    QVERIFY(info.bookOpen);
    QVERIFY2(info.previousGate.startsWith(u"Stopped the embedded redis-server"_s), qPrintable(info.previousGate));
    QVERIFY(!embedded.status().running);
    // One the console found running (someone else's) is left alone.
    FS_VERIFY_OK(embedded.start());
    QVERIFY(openAndWait(session, opened, EngineProfile{dir.path(), {}, {}, u"tester"_s}));
    QVERIFY(openAndWait(session, opened, EngineProfile{dir.path(), {}, u"none"_s, u"tester"_s}));
    QCOMPARE(opened.last().first().value<ConnectionInfo>().previousGate, QString());
    QVERIFY(embedded.status().running);
    FS_VERIFY_OK(embedded.stop());
}

void TestUiGlance::embeddedGateOthersUseKeepsRunning()
{
    // Started by the console, but a server (here: a connection of the test) still uses it:
    // it keeps running, and the console says why.
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ConsoleSession session;
    QSignalSpy opened(session.worker(), &EngineWorker::opened);
    QVERIFY(openAndWait(session, opened, EngineProfile{dir.path(), {}, {}, u"tester"_s}));
    EmbeddedRedis embedded(dir.path());
    QVERIFY(embedded.status().running);
    RedisConnection user(embedded.url());
    FS_VERIFY_OK(user.command({QByteArrayLiteral("PING")}));
    QVERIFY(openAndWait(session, opened, EngineProfile{dir.path(), {}, u"none"_s, u"tester"_s}));
    const QString said = opened.last().first().value<ConnectionInfo>().previousGate;
    QVERIFY2(said.contains(u"left running: 1 other client"_s), qPrintable(said));
    QVERIFY(embedded.status().running);
    FS_VERIFY_OK(embedded.stop());
}

QTEST_MAIN(TestUiGlance)
#include "tst_ui_glance.moc"
