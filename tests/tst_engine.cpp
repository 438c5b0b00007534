// Engine rules that are not the gate's own: the launch rules (one place for the CLI and the
// console), warnings as bounded values, the reserve answer's JSON text, and which gate tokens a
// refused reserve gives back.

#include "ContractJson.h"
#include "Engine.h"
#include "EngineWarning.h"
#include "gate/Gate.h"
#include "reconcile/Reconciler.h"
#include "store/Database.h"
#include "store/SaleStore.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"
#include "support/TestChecks.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QSet>
#include <QTcpServer>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// A gate URL on which nothing listens (connections are refused at once).
RedisUrl deadGate()
{
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    RedisUrl url = RedisUrl::tcp(u"127.0.0.1"_s, probe.serverPort());
    url.connectTimeoutMs = 200;
    return url; // the probe closes here
}

} // namespace

class TestEngine : public QObject {
    Q_OBJECT
private slots:
    void launchRulesBlockALiveSaleAndAPendingDiscrepancy_data() { test::addBackendRows(); }
    void launchRulesBlockALiveSaleAndAPendingDiscrepancy();
    void warningRingKeepsTheNewestAndCountsTheRest();
    void warningKindsHaveDistinctNames();
    void engineWarningsAreBoundedValues();
    void reserveJsonWriterWritesWhatQtWrites();
    void aTokenTheOrderHoldsIsNotGivenBack_data() { test::addBackendRows(); }
    void aTokenTheOrderHoldsIsNotGivenBack();
};

void TestEngine::launchRulesBlockALiveSaleAndAPendingDiscrepancy()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(FS_OK(engine->launchBlockers(u"A"_s)).isEmpty());

    // A scheduled sale blocks a new launch of the SKU, but not its own start.
    const Sale first = FS_OK(engine->createSale(u"A"_s, 0, 0, 60, 0));
    const QList<LaunchBlocker> live = FS_OK(engine->launchBlockers(u"A"_s));
    QCOMPARE(live.size(), 1);
    QCOMPARE(live.first().kind, LaunchBlocker::Kind::LiveSale);
    QCOMPARE(live.first().id, first.id);
    QVERIFY(FS_OK(engine->launchBlockers(u"A"_s, first.id)).isEmpty());
    QCOMPARE(FS_OK(engine->setSaleStatus(first.id, SaleStatus::Open)).status, SaleStatus::Open);
    QCOMPARE(FS_OK(engine->setSaleStatus(first.id, SaleStatus::Stopped)).status, SaleStatus::Stopped);
    QVERIFY(FS_OK(engine->launchBlockers(u"A"_s)).isEmpty()); // a stopped sale blocks nothing

    // Units the ledger cannot explain: a discrepancy waits for approval, and no sale opens.
    FS_VERIFY_OK(engine->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5 "
                                         u"WHERE sku = 'A'"_s));
    Reconciler reconciler(*engine);
    QCOMPARE(FS_OK(reconciler.runPass(0)).stillPending, 1);
    const Sale second = FS_OK(engine->createSale(u"A"_s, 0, 0, 60, 0));
    const QList<LaunchBlocker> disputed = FS_OK(engine->launchBlockers(u"A"_s, second.id));
    QCOMPARE(disputed.size(), 1);
    QCOMPARE(disputed.first().kind, LaunchBlocker::Kind::PendingDiscrepancy);
    auto refused = engine->setSaleStatus(second.id, SaleStatus::Open);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::InvalidArgument);
    QCOMPARE(refused.error().field, u"sale"_s);
    QVERIFY2(refused.error().message.contains(u"discrepancy %1"_s.arg(disputed.first().id)),
             qPrintable(refused.error().message));
    QCOMPARE(FS_OK(engine->sales().get(second.id)).status, SaleStatus::Scheduled); // nothing changed
    QVERIFY(FS_OK(engine->launchBlockers(u"B"_s)).isEmpty()); // another SKU is not held by it

    // Rejected, the book still disagrees with its ledger: still held.
    FS_VERIFY_OK(reconciler.reject(disputed.first().id, test::by(u"tester"_s), u"counted again"_s, {u"tester"_s}));
    QCOMPARE(FS_OK(engine->launchBlockers(u"A"_s, second.id)).size(), 1);
    // Decided (the count accepted as a stocktake): the sale may open.
    FS_VERIFY_OK(test::approveAsShown(reconciler, disputed.first().id, test::by(u"tester"_s), u"counted 15"_s, {u"tester"_s}));
    QVERIFY(FS_OK(engine->launchBlockers(u"A"_s, second.id)).isEmpty());
    QCOMPARE(FS_OK(engine->setSaleStatus(second.id, SaleStatus::Open)).status, SaleStatus::Open);
}

void TestEngine::warningRingKeepsTheNewestAndCountsTheRest()
{
    WarningRing ring(3);
    for (int i = 1; i <= 5; ++i)
        ring.add(EngineWarning{WarningKind::TokenNotSettled, u"S%1"_s.arg(i), u"w%1"_s.arg(i), i});
    QCOMPARE(ring.size(), 3);
    QCOMPARE(ring.dropped(), 2);
    QCOMPARE(ring.items().first().sku, u"S3"_s); // the oldest two went
    QCOMPARE(ring.items().last().sku, u"S5"_s);
    ring.add({EngineWarning{WarningKind::GateRestored, u"S6"_s, u"w6"_s, 6}}, 10); // a sender's drops count too
    QCOMPARE(ring.dropped(), 13);
    const WarningRing taken = ring.take();
    QCOMPARE(taken.size(), 3);
    QCOMPARE(taken.dropped(), 13);
    QCOMPARE(taken.items().last().kind, WarningKind::GateRestored);
    QVERIFY(ring.isEmpty());
    QCOMPARE(ring.dropped(), 0);
    for (int i = 0; i < 4; ++i) // the taken-from ring keeps its capacity
        ring.add(EngineWarning{});
    QCOMPARE(ring.size(), 3);
}

void TestEngine::warningKindsHaveDistinctNames()
{
    QSet<QString> names;
    for (int k = 0; k <= int(WarningKind::RefusalNotCounted); ++k) {
        const QString name = warningKindName(WarningKind(k));
        QVERIFY2(!name.isEmpty() && name != u"unknown"_s, qPrintable(QString::number(k)));
        names.insert(name);
    }
    QCOMPARE(names.size(), int(WarningKind::RefusalNotCounted) + 1);
}

void TestEngine::engineWarningsAreBoundedValues()
{
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    auto engine = test::openEngine(fresh.url(), deadGate());
    QVERIFY(engine);
    const qint64 before = QDateTime::currentMSecsSinceEpoch();
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10)); // the book has it; the gate is down
    const WarningRing one = engine->takeWarnings();
    QCOMPARE(one.size(), 1);
    const EngineWarning &w = one.items().first();
    QCOMPARE(w.kind, WarningKind::GateNotLoaded);
    QCOMPARE(w.sku, u"A"_s);
    QVERIFY2(w.message.contains(u"gate not loaded"_s), qPrintable(w.message));
    QVERIFY(w.atMs >= before && w.atMs <= QDateTime::currentMSecsSinceEpoch());
    QVERIFY(engine->takeWarnings().isEmpty()); // taken once

    // Nobody drains them: the engine keeps the newest kMaxWarnings and counts the rest.
    const int restocks = int(Engine::kMaxWarnings) + 20;
    for (int i = 0; i < restocks; ++i)
        FS_VERIFY_OK(engine->restock(u"A"_s, 1));
    const WarningRing many = engine->takeWarnings();
    QCOMPARE(many.size(), Engine::kMaxWarnings);
    QCOMPARE(many.dropped(), 20);
    QCOMPARE(test::countWarnings(many, WarningKind::GateNotRaised, u"A"_s), int(Engine::kMaxWarnings));
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 10 + restocks);
}

void TestEngine::reserveJsonWriterWritesWhatQtWrites()
{
    // One writer through answers of every kind, in an order that makes it reuse a refusal's
    // text, change it (another outcome, another SKU, none) and pass it by (tokens, expiry).
    const auto refused = [](Outcome o, const QString &order, const QString &sku) {
        return ReserveResult{o, order, {OrderLine{u"S-1"_s, 1, {}}}, sku, 0};
    };
    const QList<ReserveResult> answers{
        refused(Outcome::OutOfStock, u"o-1"_s, u"S-1"_s),
        refused(Outcome::OutOfStock, u"o-2"_s, u"S-1"_s),
        refused(Outcome::OutOfStock, u"a.much_longer-order.id.than-the-first-0123456789"_s, u"S-1"_s),
        ReserveResult{Outcome::Reserved, u"o-3"_s, {OrderLine{u"S-1"_s, 2, u"S-1.tok-3"_s}}, {}, 1'764'000'000'123},
        refused(Outcome::OutOfStock, u"o-4"_s, u"S-1"_s),
        ReserveResult{Outcome::Duplicate, u"o-3"_s, {OrderLine{u"S-1"_s, 2, u"S-1.tok-3"_s}}, {}, 0},
        refused(Outcome::OutOfStock, u"o-5"_s, u"S-2"_s),
        refused(Outcome::OutOfStock, u"o-6"_s, u"S-1"_s),
        refused(Outcome::LimitExceeded, u"o-7"_s, {}),
        refused(Outcome::LimitExceeded, u"o-8"_s, {}),
        refused(Outcome::SaleClosed, u"o-9"_s, {}),
        refused(Outcome::Paused, u"o-10"_s, u"S-1"_s),
        refused(Outcome::GateUnavailable, u"o-11"_s, {}),
        refused(Outcome::GateUnavailable, u"o-12"_s, {}),
        refused(Outcome::OutOfStock, u"o-13"_s, u"S-1"_s),
    };
    ReserveJsonWriter writer;
    for (const ReserveResult &r : answers)
        QCOMPARE(writer.write(r), QJsonDocument(reserveJson(r)).toJson(QJsonDocument::Compact));
}

void TestEngine::aTokenTheOrderHoldsIsNotGivenBack()
{
    // Two attempts of one order id meet at the gate: the first is issued a token, the second
    // is handed the same token (held) and books first. The first's book answer is a
    // duplicate, and the token it was issued is the booked order's: the gate keeps it, so
    // the gate and the book agree. Whether the duplicate is another storefront's order
    // (which shows the first nothing of it) or one principal's order with other lines.
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    FS_VERIFY_OK(engine->addSku(u"B"_s, 10));
    const Actor shopA{u"shop-a"_s, u"server@h"_s, Actor::Reach::OwnOrders};
    const Actor shopB{u"shop-b"_s, u"server@h"_s, Actor::Reach::OwnOrders};
    auto pastGate = [&](const QString &order, const QList<OrderLine> &lines, const Actor &by) {
        auto request = Engine::checkReserve(order, u"u1"_s, lines, 60);
        if (!request)
            qFatal("checkReserve: %s", qPrintable(request.error().message));
        request->actor = by;
        ReserveAttempt attempt = engine->planReserve(*request);
        engine->passGate({&attempt});
        return attempt;
    };
    auto agree = [&](const QString &sku, qint64 available) {
        const qint64 gate = engine->gateLevels(sku).available;
        const qint64 book = FS_OK(engine->book().levels(sku)).available;
        if (gate != available || book != available)
            qWarning("%s: gate %lld, book %lld, want %lld", qPrintable(sku), gate, book, available);
        return gate == available && book == available;
    };

    // Another storefront's order.
    ReserveAttempt first = pastGate(u"o-1"_s, {{u"A"_s, 1, {}}}, shopA);
    ReserveAttempt second = pastGate(u"o-1"_s, {{u"A"_s, 1, {}}}, shopB);
    QCOMPARE(first.created.size(), 1);
    QVERIFY(second.created.isEmpty());
    const QString token = first.created.first().token;
    const ReserveResult booked = FS_OK(engine->finishReserve(second));
    QCOMPARE(booked.outcome, Outcome::Reserved);
    QCOMPARE(booked.lines.first().token, token);
    const ReserveResult other = FS_OK(engine->finishReserve(first));
    QCOMPARE(other.outcome, Outcome::Duplicate);
    QVERIFY(other.lines.isEmpty());
    QVERIFY(agree(u"A"_s, 9));

    // One principal's order with other lines: the second attempt adds B.
    ReserveAttempt one = pastGate(u"o-2"_s, {{u"A"_s, 1, {}}}, shopA);
    ReserveAttempt two = pastGate(u"o-2"_s, {{u"A"_s, 1, {}}, {u"B"_s, 1, {}}}, shopA);
    QCOMPARE(FS_OK(engine->finishReserve(two)).outcome, Outcome::Reserved);
    const ReserveResult differs = FS_OK(engine->finishReserve(one));
    QCOMPARE(differs.outcome, Outcome::Duplicate);
    QVERIFY(agree(u"A"_s, 8));
    QVERIFY(agree(u"B"_s, 9));
    QCOMPARE(FS_OK(engine->gate()->heldCount(u"A"_s)), 0);
    QVERIFY(test::bookHolds(*engine));

    // The tokens are their orders': a confirm sells them, a release gives them back.
    QCOMPARE(FS_OK(engine->confirm(u"o-1"_s, u"pay-1"_s, shopB)).outcome, Outcome::Paid);
    QCOMPARE(FS_OK(engine->release(u"o-2"_s, u"cancel"_s, shopA)).outcome, Outcome::Released);
    QVERIFY(agree(u"A"_s, 9));
    QVERIFY(agree(u"B"_s, 10));
    QVERIFY(test::bookHolds(*engine));
}

QTEST_GUILESS_MAIN(TestEngine)
#include "tst_engine.moc"
