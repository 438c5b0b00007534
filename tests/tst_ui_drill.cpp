// The console's Drill view, offscreen: a small drill runs from the view on its own thread, on
// a scratch book and gate of its own by default, its report arrives and says PASSED, and the
// event loop keeps turning meanwhile; the console's book is left untouched. A console whose
// book has an open sale: the scratch drill (every fault, a redis-server restart among them)
// leaves the live gate's redis-server running with its pid, and pointing the drill at the
// live book and gate asks first and is refused, naming the sale.

#include "ConsoleSession.h"
#include "DrillView.h"
#include "Engine.h"
#include "EngineWorker.h"
#include "MainWindow.h"
#include "gate/EmbeddedRedis.h"
#include "open/EngineOpener.h"
#include "store/SaleStore.h"
#include "support/RedisFixture.h"
#include "support/TestChecks.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace flashstock;

class TestUiDrill : public QObject {
    Q_OBJECT
private slots:
    void drillRunsFromTheView();
    void drillNeverTouchesALiveSale();
};

void TestUiDrill::drillRunsFromTheView()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const EngineProfile profile{dir.path(), {}, u"none"_s, u"tester"_s};
    MainWindow window(profile);
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->connection().bookOpen, 10000);
    window.tabs()->setCurrentIndex(MainWindow::DrillTab);
    DrillView *view = window.drillView();
    QCOMPARE(window.tabs()->currentWidget(), view);
    QVERIFY(view->skuField()->text().startsWith(u"drill-"_s));

    view->skuField()->setText(u"DRILL-UI"_s);
    view->stockField()->setValue(50);
    view->buyersField()->setValue(200);
    view->concurrencyField()->setValue(4);
    view->payRatioField()->setValue(0.7);
    view->holdField()->setValue(1);
    view->faultsField()->setCurrentIndex(view->faultsField()->findData(u"none"_s));
    view->seedField()->setValue(7);

    QSignalSpy finished(view, &DrillView::drillFinished);
    QElapsedTimer clock, sinceTick;
    qint64 longestStallMs = 0;
    int progressSeen = 0;
    QTimer tick;
    tick.setInterval(10);
    connect(&tick, &QTimer::timeout, this, [&] {
        longestStallMs = qMax(longestStallMs, sinceTick.restart());
        if (view->progressBar()->value() > 0)
            ++progressSeen;
    });
    clock.start();
    sinceTick.start();
    tick.start();
    QTest::mouseClick(view->runButton(), Qt::LeftButton);
    QVERIFY(view->isRunning());
    QVERIFY(!view->runButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 120000);
    tick.stop();
    qInfo("drill took %lld ms; longest GUI stall %lld ms; progress seen on %d ticks", clock.elapsed(),
          longestStallMs, progressSeen);
    QVERIFY2(longestStallMs < 1000, "the GUI thread was blocked");
    const DrillOutcome outcome = finished.first().first().value<DrillOutcome>();
    QVERIFY2(outcome.ran, qPrintable(outcome.error));
    QVERIFY2(outcome.passed, qPrintable(outcome.reportText));
    QVERIFY(view->verdictText().contains(u"PASSED"_s));
    QVERIFY(view->reportText().contains(u"PASSED"_s));
    QVERIFY(view->reportText().contains(u"DRILL-UI"_s));
    QVERIFY(view->runButton()->isEnabled());
    QCOMPARE(view->progressBar()->value(), view->progressBar()->maximum());
    // The field kept the operator's own name (only a generated default is renewed).
    QCOMPARE(view->skuField()->text(), u"DRILL-UI"_s);

    if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
        window.resize(1280, 800);
        QCoreApplication::processEvents();
        QVERIFY(window.grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(u"drill.png"_s)));
    }

    // A long drill, cancelled from the view: it winds down and says CANCELLED, not PASSED.
    view->skuField()->setText(u"DRILL-CANCEL"_s);
    view->buyersField()->setValue(5'000'000);
    finished.clear();
    QVERIFY(!view->cancelButton()->isEnabled());
    view->run();
    QVERIFY(view->cancelButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(view->progressBar()->value() > 0, 30000);
    QTest::mouseClick(view->cancelButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
    const DrillOutcome cancelled = finished.first().first().value<DrillOutcome>();
    QVERIFY2(cancelled.ran && cancelled.cancelled && !cancelled.passed, qPrintable(cancelled.reportText));
    QVERIFY(view->verdictText().contains(u"CANCELLED"_s));
    QVERIFY(!view->cancelButton()->isEnabled());

    // Scratch by default: the console's own book got no drill SKU, and no scratch dir is left.
    QCOMPARE(view->target(), DrillTarget::Scratch);
    auto book = Engine::open(EngineOptions{FS_OK(DbUrl::parse(u"sqlite:///"_s + dir.filePath(u"flashstock.db"_s))),
                                           std::nullopt, Actor{u"tester"_s, u"test"_s}});
    FS_VERIFY_OK(book);
    QCOMPARE(FS_OK((*book)->book().skus()), QStringList());
    QVERIFY(outcome.target.contains(u"scratch"_s));
    const QString scratchDir = outcome.target.section(u" in "_s, 1).section(u' ', 0, 0);
    QVERIFY2(!scratchDir.isEmpty() && !QFileInfo::exists(scratchDir), qPrintable(outcome.target));
}

void TestUiDrill::drillNeverTouchesALiveSale()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // The console's defaults: the data dir's book and its own embedded redis-server, which the
    // redis-restart fault would restart if the drill ran there.
    const EngineProfile profile{dir.path(), {}, {}, u"tester"_s};
    auto opened = EngineOpener::open(FS_OK(EngineOpener::resolve(profile)), u"test"_s);
    FS_VERIFY_OK(opened);
    const auto stopLive = qScopeGuard([&] { (void)EmbeddedRedis(dir.path()).stop(); });
    Engine &live = *opened->engine;
    FS_VERIFY_OK(live.addSku(u"LIVE"_s, 100));
    const qint64 saleId = FS_OK(live.createSale(u"LIVE"_s, 0, 0, 60, 1)).id;
    FS_VERIFY_OK(live.setSaleStatus(saleId, SaleStatus::Open));
    FS_VERIFY_OK(live.reserve(u"buyer-1"_s, u"alice"_s, {{u"LIVE"_s, 1, {}}}));
    const qint64 pid = EmbeddedRedis(dir.path()).status().pid;
    QVERIFY(pid > 0);

    MainWindow window(profile);
    window.resize(1280, 800);
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->connection().bookOpen, 10000);
    window.tabs()->setCurrentIndex(MainWindow::DrillTab);
    DrillView *view = window.drillView();
    QCOMPARE(view->target(), DrillTarget::Scratch);
    view->stockField()->setValue(50);
    view->buyersField()->setValue(300);
    view->concurrencyField()->setValue(4);
    view->holdField()->setValue(1);
    view->faultsField()->setCurrentIndex(view->faultsField()->findData(u"all"_s));
    const QString sku = view->skuField()->text();
    QSignalSpy finished(view, &DrillView::drillFinished);
    view->run();
    QVERIFY(!view->pendingConfirmation()); // scratch: nothing to ask
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 150000);
    const DrillOutcome outcome = finished.first().first().value<DrillOutcome>();
    QVERIFY2(outcome.ran, qPrintable(outcome.error));
    QVERIFY2(outcome.passed, qPrintable(outcome.reportText));
    QVERIFY(outcome.reportText.contains(u"redis-restart"_s));
    QVERIFY(view->skuField()->text() != sku); // a generated name is renewed
    if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
        QCoreApplication::processEvents();
        QVERIFY(window.grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(u"drill.png"_s)));
    }
    // The live sale did not notice: same redis-server, same book, its hold intact.
    QCOMPARE(EmbeddedRedis(dir.path()).status().pid, pid);
    QVERIFY(EmbeddedRedis(dir.path()).status().running);
    QCOMPARE(FS_OK(live.book().skus()), QStringList{u"LIVE"_s});
    QCOMPARE(FS_OK(live.book().levels(u"LIVE"_s)).locked, 1);
    QCOMPARE(FS_OK(live.gate()->available(u"LIVE"_s)), 99);

    // The live book and gate are an explicit choice: it asks, naming them, and is refused.
    view->setTarget(DrillTarget::Console);
    finished.clear();
    view->run();
    QMessageBox *ask = view->pendingConfirmation();
    QVERIFY(ask);
    QVERIFY2(ask->informativeText().contains(dir.filePath(u"flashstock.db"_s)), qPrintable(ask->informativeText()));
    QVERIFY(ask->informativeText().contains(u"redis.sock"_s));
    if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
        QCoreApplication::processEvents();
        QVERIFY(ask->grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(u"drill-confirm.png"_s)));
    }
    QAbstractButton *go = nullptr;
    for (QAbstractButton *b : ask->buttons())
        if (b->text() == u"Run on the live book and gate"_s)
            go = b;
    QVERIFY(go);
    go->click();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 30000);
    const DrillOutcome refused = finished.first().first().value<DrillOutcome>();
    QVERIFY(!refused.ran);
    QVERIFY2(refused.error.contains(u"sale %1 of LIVE is open"_s.arg(saleId)), qPrintable(refused.error));
    QVERIFY(view->verdictText().contains(u"could not run"_s));
    QCOMPARE(EmbeddedRedis(dir.path()).status().pid, pid);
    QCOMPARE(FS_OK(live.book().skus()), QStringList{u"LIVE"_s});
}

QTEST_MAIN(TestUiDrill)
#include "tst_ui_drill.moc"
