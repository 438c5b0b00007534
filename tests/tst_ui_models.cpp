// The console's table models (QAbstractItemModelTester) and the live chart's point cap.

#include "ApprovalDialog.h"
#include "ConsoleText.h"
#include "GateNodesStatus.h"
#include "LiveView.h"
#include "models/BucketLevelsModel.h"
#include "models/DiscrepancyModel.h"
#include "models/LedgerModel.h"
#include "models/ModelRoles.h"
#include "models/SalesModel.h"
#include "models/SkuLevelsModel.h"
#include "models/WarningModel.h"

#include <QAbstractItemModelTester>
#include <QTextDocumentFragment>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// A has a gate (its refusal counter grows by `refused`), B is book-only.
QList<SkuSample> samples(qint64 available, qint64 refused = 0)
{
    return {SkuSample{u"A"_s, available, 3, 7, available + 10, 1, available + 1, 100 - available, refused},
            SkuSample{u"B"_s, 50, 0, 0, 50, 4, -1, -1, -1}};
}

} // namespace

class TestUiModels : public QObject {
    Q_OBJECT
private slots:
    void skuLevelsModel();
    void skuLevelsShowSaleStatePauseAndNa();
    void bucketLevelsModel();
    void salesModel();
    void discrepancyModel();
    void approvalSaysWhatChanges_data();
    void approvalSaysWhatChanges();
    void ledgerModel();
    void warningModel();
    void liveChartStaysWithinCap();
    void gateNodesStatus();
    void liveRejectRateFollowsGateCounter();
};

void TestUiModels::skuLevelsModel()
{
    SkuLevelsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSamples(samples(90), {{u"A"_s, SkuRates{2.5, 4.0}}, {u"B"_s, SkuRates{1.0, -1}}});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, SkuLevelsModel::TakenRate).data(RawRole).toDouble(), 2.5);
    QCOMPARE(model.index(0, SkuLevelsModel::RefusedRate).data(RawRole).toDouble(), 4.0);
    QCOMPARE(model.index(1, SkuLevelsModel::RefusedRate).data(RawRole).toDouble(), -1.0);
    QCOMPARE(model.index(1, SkuLevelsModel::RefusedRate).data().toString(), u"n/a"_s);
    QCOMPARE(model.index(0, SkuLevelsModel::Drift).data(RawRole).toLongLong(), 1);
    QCOMPARE(model.index(1, SkuLevelsModel::GateAvailable).data(RawRole).toLongLong(), -1);
    QVERIFY(!model.index(1, SkuLevelsModel::Drift).data(RawRole).isValid());
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setSamples(samples(80)); // same SKUs: updated in place
    QCOMPARE(reset.count(), 0);
    QCOMPARE(model.index(0, SkuLevelsModel::Available).data(RawRole).toLongLong(), 80);
    model.setSamples({});
    QCOMPARE(model.rowCount(), 0);
}

void TestUiModels::skuLevelsShowSaleStatePauseAndNa()
{
    SkuLevelsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const qint64 now = 1'800'000'000'000;
    QList<SkuSample> rows = samples(1234);
    rows[0].sale = Sale{3, u"A"_s, SaleStatus::Open, 0, 0, 120, 1, true, 100, 0};
    rows[0].pausedBy = {12};
    rows[0].overdue = OverdueHolds{u"A"_s, 2, 5, now - 65000};
    rows[1].sale = Sale{4, u"B"_s, SaleStatus::Scheduled, now + 3600000, 0, 120, 1, false, 50, 0};
    model.setSamples(rows, {}, now);
    QCOMPARE(model.index(0, SkuLevelsModel::SaleState).data().toString(), u"‖ paused by #12 · open · book-only"_s);
    // Every symbol shown must exist in the console's font: U+23F8 (pause), in no Debian
    // font, drew an empty box.
    const QFontMetrics metrics(QGuiApplication::font());
    const QString shown = model.index(0, SkuLevelsModel::SaleState).data().toString()
                          + QTextDocumentFragment::fromHtml(ConsoleText::badge(u"red"_s, u"x"_s)).toPlainText();
    for (char32_t c : shown.toUcs4())
        QVERIFY2(metrics.inFontUcs4(c), qPrintable(u"U+%1 is not in %2"_s.arg(quint32(c), 4, 16, QChar(u'0'))
                                                      .arg(QGuiApplication::font().family())));
    QCOMPARE(model.index(0, SkuLevelsModel::SaleState).data(RawRole).toString(), u"open"_s);
    QVERIFY(model.index(0, SkuLevelsModel::SaleState).data(Qt::ToolTipRole).toString().contains(u"#12 waits"_s));
    QCOMPARE(model.index(1, SkuLevelsModel::SaleState).data().toString(),
             u"scheduled · starts %1"_s.arg(ConsoleText::utcTime(now + 3600000, false)));
    QCOMPARE(model.index(0, SkuLevelsModel::PastExpiry).data(RawRole).toLongLong(), 2);
    QCOMPARE(model.index(0, SkuLevelsModel::PastExpiry).data().toString(), u"2 (5 units)"_s);
    QVERIFY(model.index(0, SkuLevelsModel::PastExpiry).data(Qt::ToolTipRole).toString().contains(u"1 min 5 s"_s));
    // No gate figure: n/a, not a number; exported empty; numbers exported plain.
    QCOMPARE(model.index(1, SkuLevelsModel::GateAvailable).data().toString(), u"n/a"_s);
    QCOMPARE(model.index(1, SkuLevelsModel::Drift).data().toString(), u"n/a"_s);
    QCOMPARE(model.index(1, SkuLevelsModel::Drift).data(ExportRole).toString(), QString());
    QCOMPARE(model.index(0, SkuLevelsModel::Available).data(ExportRole).toLongLong(), 1234);
    QCOMPARE(model.index(0, SkuLevelsModel::Buckets).data(RawRole).toInt(), 1);
    QCOMPARE(model.rowOf(u"B"_s), 1);
    QCOMPARE(model.rowOf(u"nope"_s), -1);
}

void TestUiModels::bucketLevelsModel()
{
    BucketLevelsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setBuckets({{0, 10, 1, 2, 13}, {1, 7, 0, 0, 7}});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(1, BucketLevelsModel::Available).data(RawRole).toLongLong(), 7);
    QCOMPARE(model.index(0, BucketLevelsModel::Total).data().toString(), u"13"_s);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setBuckets({{0, 9, 2, 2, 13}, {1, 7, 0, 0, 7}}); // same buckets: in place
    QCOMPARE(reset.count(), 0);
    QCOMPARE(model.index(0, BucketLevelsModel::Locked).data(RawRole).toLongLong(), 2);
    model.setBuckets({});
    QCOMPARE(model.rowCount(), 0);
}

void TestUiModels::salesModel()
{
    SalesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    Sale open{2, u"A"_s, SaleStatus::Open, 0, 0, 120, 1, false, 100, 0};
    Sale old{1, u"A"_s, SaleStatus::Stopped, 0, 0, 120, 1, false, 40, 0};
    model.setSales({open, old}, samples(75), {{u"A"_s, SkuRates{4.0, 12.5}}});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, SalesModel::Id).data(RawRole).toLongLong(), 2);
    QCOMPARE(model.index(0, SalesModel::SoldPercent).data(RawRole).toDouble(), 25.0);
    QCOMPARE(model.index(0, SalesModel::ReserveRate).data(RawRole).toDouble(), 4.0);
    QCOMPARE(model.index(0, SalesModel::RejectRate).data(RawRole).toDouble(), 12.5);
    QVERIFY(!model.index(1, SalesModel::RejectRate).data(RawRole).isValid()); // a stopped sale has no rates
    QVERIFY(!model.index(1, SalesModel::SoldPercent).data(RawRole).isValid()); // not the latest sale
    QCOMPARE(model.index(0, SalesModel::Status).data(RawRole).toString(), u"open"_s);
    model.setSales({open}, samples(70), {});
    QCOMPARE(model.rowCount(), 1);
}

void TestUiModels::discrepancyModel()
{
    DiscrepancyModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    Discrepancy pending;
    pending.id = 7;
    pending.kind = DiscrepancyKind::LedgerMismatch;
    pending.sku = u"A"_s;
    pending.bucket = 0;
    pending.status = DiscrepancyStatus::PendingApproval;
    pending.delta = -5;
    pending.bookValue = 15;
    pending.ledgerValue = 10;
    pending.proposal = u"restore A bucket 0"_s;
    Discrepancy healed;
    healed.id = 6;
    healed.kind = DiscrepancyKind::GateExcess;
    healed.sku = u"B"_s;
    healed.status = DiscrepancyStatus::AutoFixed;
    model.setDiscrepancies({pending, healed});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), int(DiscrepancyModel::ColumnCount));
    QCOMPARE(model.index(0, DiscrepancyModel::Kind).data(RawRole).toString(), u"ledger_mismatch"_s);
    QCOMPARE(model.index(0, DiscrepancyModel::Status).data(RawRole).toString(), u"pending_approval"_s);
    QCOMPARE(model.index(0, DiscrepancyModel::Delta).data(RawRole).toLongLong(), -5);
    QCOMPARE(model.index(1, DiscrepancyModel::Gate).data().toString(), QString()); // n/a
    QCOMPARE(model.rowOf(6), 1);
    model.setDiscrepancies({});
    QCOMPARE(model.rowCount(), 0);
}

void TestUiModels::approvalSaysWhatChanges_data()
{
    QTest::addColumn<int>("correction");
    QTest::addColumn<QStringList>("says");
    QTest::addColumn<QStringList>("never");
    QTest::newRow("restore") << 0 << QStringList{u"A bucket 0: 15/0/0 → 10/0/0"_s}
                             << QStringList{u"stocktake"_s};
    QTest::newRow("stocktake") << 1
                               << QStringList{u"keeps its figure 6/0/0"_s, u"ledger moves from 10/0/0 to 6/0/0"_s}
                               << QStringList{u"→ 10"_s};
    QTest::newRow("order status") << 2 << QStringList{u"order o1: CLOSED → PENDING"_s, u"no stock moves"_s}
                                  << QStringList{u"Book figure"_s};
    QTest::newRow("refund") << 3 << QStringList{u"refund of payment pay9 on order o1"_s, u"no stock moves"_s}
                            << QStringList{u"Book figure"_s};
}

void TestUiModels::approvalSaysWhatChanges()
{
    // The dialog's "what will change" is right for every kind of correction.
    QFETCH(int, correction);
    QFETCH(QStringList, says);
    QFETCH(QStringList, never);
    Discrepancy d;
    d.id = 7;
    d.kind = DiscrepancyKind::LedgerMismatch;
    d.sku = u"A"_s;
    d.bucket = 0;
    d.status = DiscrepancyStatus::PendingApproval;
    d.order = u"o1"_s;
    const Correction corrections[] = {RestoreBucket{{15, 0, 0}, {10, 0, 0}}, AcceptStocktake{{6, 0, 0}, {10, 0, 0}},
                                      ChangeOrderStatus{OrderStatus::Closed, OrderStatus::Pending},
                                      RecordRefund{u"pay9"_s}};
    d.correction = corrections[correction];
    d.bookValue = correction == 0 ? 15 : 6;
    d.ledgerValue = 10;
    d.delta = d.ledgerValue - d.bookValue;
    ApprovalDialog dialog(d, true, u"alice"_s);
    const QString summary = dialog.changeSummary();
    for (const QString &s : says)
        QVERIFY2(summary.contains(s), qPrintable(summary));
    for (const QString &s : never)
        QVERIFY2(!summary.contains(s), qPrintable(summary));
}

void TestUiModels::ledgerModel()
{
    LedgerModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    LedgerRow row;
    row.id = 1;
    row.order = u"o1"_s;
    row.operation = u"RESERVE"_s;
    row.sku = u"A"_s;
    row.deltaAvailable = -2;
    row.deltaLocked = 2;
    row.after = {0, 8, 2, 0, 10};
    LedgerRow confirm = row;
    confirm.id = 2;
    confirm.operation = u"CONFIRM"_s;
    confirm.deltaAvailable = 0;
    confirm.deltaLocked = -2;
    confirm.deltaSold = 2;
    model.setRows({row, confirm});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(1, LedgerModel::DeltaSold).data(RawRole).toLongLong(), 2);
    QCOMPARE(model.index(0, LedgerModel::DeltaAvailable).data().toString(), u"-2"_s);
    QCOMPARE(model.index(1, LedgerModel::DeltaAvailable).data().toString(), u"·"_s);
}

void TestUiModels::warningModel()
{
    WarningModel model(2);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy counted(&model, &WarningModel::countChanged);
    model.add({EngineWarning{WarningKind::GateNotLoaded, u"A"_s, u"first"_s, 1000},
               EngineWarning{WarningKind::TokenNotSettled, u"B"_s, u"second"_s, 2000},
               EngineWarning{WarningKind::GateRestored, u"C"_s, u"third"_s, 3000}},
              4);
    QCOMPARE(counted.count(), 1);
    QCOMPARE(model.rowCount(), 2); // bounded: the oldest went
    QCOMPARE(model.dropped(), 5);  // one here, four the engine dropped
    QCOMPARE(model.index(0, WarningModel::Sku).data().toString(), u"C"_s); // newest first
    QCOMPARE(model.index(0, WarningModel::Kind).data(RawRole).toString(), u"gate_restored"_s);
    QCOMPARE(model.index(0, WarningModel::Kind).data().toString(), u"gate restored"_s);
    QCOMPARE(model.index(1, WarningModel::Time).data(RawRole).toLongLong(), 2000);
    QCOMPARE(model.index(1, WarningModel::Message).data().toString(), u"second"_s);
    QVERIFY(!model.at(2));
    model.add({}, 0); // nothing new: nothing happens
    QCOMPARE(counted.count(), 1);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.dropped(), 0);
    QCOMPARE(counted.count(), 2);
}

void TestUiModels::liveChartStaysWithinCap()
{
    LiveView view;
    view.resize(900, 600);
    view.show();
    view.setPointCap(20);
    const qint64 t0 = QDateTime::currentMSecsSinceEpoch() - 60000;
    for (int i = 0; i < 50; ++i) {
        LiveSnapshot snap;
        snap.atMs = t0 + i * 1000;
        snap.health.bookUp = true;
        snap.skus = samples(100 - i);
        view.addSnapshot(snap);
        for (int s = 0; s < LiveView::SeriesCount; ++s)
            QVERIFY(view.seriesPointCount(LiveView::Series(s)) <= view.pointCap());
    }
    QCOMPARE(view.currentSku(), u"A"_s);
    QCOMPARE(view.seriesPointCount(LiveView::BookAvailable), 20);
    QCOMPARE(view.seriesPointCount(LiveView::GateAvailable), 20);
    QCOMPARE(view.levelsModel()->rowCount(), 2);
    QVERIFY(view.rates().value(u"A"_s).taken > 0.5); // one unit per second going out
    view.setCurrentSku(u"B"_s);
    QCOMPARE(view.seriesPointCount(LiveView::GateAvailable), 0); // B has no gate figure
    QCOMPARE(view.seriesPointCount(LiveView::BookAvailable), 20);
    // The default cap holds 15 minutes of 1 s samples.
    LiveView fresh;
    QCOMPARE(fresh.pointCap(), 900);
    QCOMPARE(fresh.windowMinutes(), 15);
}

void TestUiModels::liveRejectRateFollowsGateCounter()
{
    LiveView view;
    const qint64 t0 = QDateTime::currentMSecsSinceEpoch() - 60000;
    auto feed = [&](int second, qint64 refused) {
        LiveSnapshot snap;
        snap.atMs = t0 + second * 1000;
        snap.health.bookUp = true;
        snap.skus = samples(50, refused);
        view.addSnapshot(snap);
    };
    for (int i = 0; i <= 10; ++i)
        feed(i, 1000 + 40 * i); // 40 refusals a second
    QCOMPARE(view.rates().value(u"A"_s).refused, 40.0);
    QCOMPARE(view.levelsModel()->index(0, SkuLevelsModel::RefusedRate).data(RawRole).toDouble(), 40.0);
    QCOMPARE(view.rates().value(u"B"_s).refused, -1.0); // book-only: not counted
    for (int i = 11; i <= 20; ++i)
        feed(i, 1400); // the crowd left: no refusals
    QCOMPARE(view.rates().value(u"A"_s).refused, 0.0);
    feed(21, 3); // the gate restarted without persistence: its counter began again
    QCOMPARE(view.rates().value(u"A"_s).refused, 0.0);
    feed(22, 13);
    QCOMPARE(view.rates().value(u"A"_s).refused, 10.0);
}

void TestUiModels::gateNodesStatus()
{
    // A cluster's nodes as Gate::health() gives them: masters, then replicas; one master down.
    GateNodesStatus status;
    const auto node = [](const char *address, GateNodeHealth::Role role, bool up, int slotCount, const char *detail = "") {
        GateNodeHealth n;
        n.address = QString::fromLatin1(address);
        n.role = role;
        n.reachable = up;
        n.scriptsLoaded = up;
        n.roundTripUs = 180;
        n.slotCount = slotCount;
        n.detail = QString::fromLatin1(detail);
        return n;
    };
    using Role = GateNodeHealth::Role;
    status.setNodes({node("127.0.0.1:7000", Role::Master, true, 5461), node("127.0.0.1:7001", Role::Master, true, 5462),
                     node("127.0.0.1:7002", Role::Master, false, 5461, "Connection refused"),
                     node("127.0.0.1:7003", Role::Replica, true, 0), node("127.0.0.1:7004", Role::Replica, true, 0),
                     node("127.0.0.1:7005", Role::Replica, true, 0)});
    QVERIFY(!status.isHidden());
    QCOMPARE(status.summary(), u"Nodes: 2/3 masters, 3/3 replicas up"_s);
    QCOMPARE(status.text().count(u"#d9534f"_s), 1); // one red dot
    QCOMPARE(status.text().count(u"●"_s), 6);
    QVERIFY(status.toolTip().contains(u"127.0.0.1:7002"_s));
    QVERIFY(status.toolTip().contains(u"DOWN — Connection refused"_s));
    QVERIFY(status.toolTip().contains(u"master, 5462 slots"_s));
    // A single server, or no gate: nothing beside the gate's own badge.
    status.setNodes({node("127.0.0.1:6379", Role::Single, true, 0)});
    QVERIFY(status.isHidden());
    QVERIFY(status.summary().isEmpty());
}

QTEST_MAIN(TestUiModels)
#include "tst_ui_models.moc"
