// The console's Drill view, offscreen, on a real SQLite book in a temporary data dir,
// book-only (`--redis none`, no redis-server needed): a small drill runs from the view on its
// own thread, its report arrives and says PASSED, and the event loop keeps turning meanwhile.
// A second drill on the same SKU is refused and the refusal is shown plainly.

#include "ConsoleSession.h"
#include "DrillView.h"
#include "EngineWorker.h"
#include "MainWindow.h"
#include "support/RedisFixture.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
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
    void drillWithGateAndAllFaults();
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

    // The same SKU again: the drill refuses an existing SKU, and the view says so plainly.
    view->skuField()->setText(u"DRILL-UI"_s);
    finished.clear();
    view->run();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 30000);
    const DrillOutcome refused = finished.first().first().value<DrillOutcome>();
    QVERIFY(!refused.ran);
    QVERIFY2(refused.error.contains(u"exists"_s), qPrintable(refused.error));
    QVERIFY(view->verdictText().contains(u"could not run"_s));
    QVERIFY(view->reportText().contains(u"exists"_s));
}

void TestUiDrill::drillWithGateAndAllFaults()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    RedisFixture redis;
    QVERIFY2(redis.start(), qPrintable(redis.errorString()));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    MainWindow window(EngineProfile{dir.path(), {}, redis.url().toString(), u"tester"_s});
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->connection().bookOpen, 10000);
    DrillView *view = window.drillView();
    view->stockField()->setValue(50);
    view->buyersField()->setValue(300);
    view->concurrencyField()->setValue(4);
    view->holdField()->setValue(1);
    view->faultsField()->setCurrentIndex(view->faultsField()->findData(u"all"_s));
    const QString sku = view->skuField()->text();
    QSignalSpy finished(view, &DrillView::drillFinished);
    view->run();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 150000);
    const DrillOutcome outcome = finished.first().first().value<DrillOutcome>();
    QVERIFY2(outcome.ran, qPrintable(outcome.error));
    QVERIFY2(outcome.passed, qPrintable(outcome.reportText));
    QVERIFY(view->reportText().contains(u"script-flush"_s));
    // A generated name is renewed after a drill, so the next run does not collide.
    QVERIFY(view->skuField()->text() != sku);
    if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
        window.tabs()->setCurrentIndex(MainWindow::DrillTab);
        QCoreApplication::processEvents();
        QVERIFY(window.grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(u"drill-gate.png"_s)));
    }
}

QTEST_MAIN(TestUiDrill)
#include "tst_ui_drill.moc"
