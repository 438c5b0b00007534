// The engine with the Redis gate in front of the book: a real redis-server (RedisFixture)
// and both book backends.

#include "Engine.h"
#include "gate/Gate.h"
#include "gate/GateKeys.h"
#include "store/Database.h"
#include "store/SaleStore.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"

#include <QElapsedTimer>
#include <QTest>

#include <atomic>
#include <mutex>
#include <latch>
#include <thread>
#include <vector>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

qint64 gateAvailable(Engine &engine, const QString &sku)
{
    return engine.gateLevels(sku).available;
}

} // namespace

class TestEngineGate : public QObject {
    Q_OBJECT

private slots:
    void crowdThroughGate_data();
    void crowdThroughGate();
    void sameOrderFiveTimes_data() { test::addBackendRows(); }
    void sameOrderFiveTimes();
    void perUserLimit_data() { test::addBackendRows(); }
    void perUserLimit();
    void bookRefusalCompensatesGate_data() { test::addBackendRows(); }
    void bookRefusalCompensatesGate();
    void missingStockKeyReloads_data() { test::addBackendRows(); }
    void missingStockKeyReloads();
    void gateThatLostItsDataKeepsSaleAndLimit_data() { test::addBackendRows(); }
    void gateThatLostItsDataKeepsSaleAndLimit();
    void bookSaleStatusHasTheLastWord_data() { test::addBackendRows(); }
    void bookSaleStatusHasTheLastWord();
    void limitHoldsAfterBookOnlyMode_data() { test::addBackendRows(); }
    void limitHoldsAfterBookOnlyMode();
    void rebuildCountsEachBuyersUnitOnce();
    void crowdAfterGateLostItsData();
    void corruptCountersAreReportedAndReset();
    void idleConnectionClosedByServer();
    void redisKilledAndRestarted();
    void bookOnlyWhileGateIsDown();
    void releaseAndConfirmTellTheGate();
    void expireKilledHalfWayLeavesNothingLocked_data() { test::addBackendRows(); }
    void expireKilledHalfWayLeavesNothingLocked();
};

void TestEngineGate::crowdThroughGate_data()
{
    QTest::addColumn<QString>("backend");
    QTest::addColumn<bool>("flushScripts");
    for (const QString &b : test::bookBackends()) {
        QTest::addRow("%s", qPrintable(b)) << b << false;
        QTest::addRow("%s with SCRIPT FLUSH", qPrintable(b)) << b << true;
    }
}

void TestEngineGate::crowdThroughGate()
{
    QFETCH(QString, backend);
    QFETCH(bool, flushScripts);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 1000));
    QCOMPARE(gateAvailable(*engine, u"A"_s), 1000);

    const int threads = 32, perThread = 100;
    std::atomic<int> reserved{0}, outOfStock{0}, errors{0};
    std::latch start(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            auto mine = test::openEngine(fresh.url(), redis.url());
            start.arrive_and_wait();
            for (int i = 0; mine && i < perThread; ++i) {
                auto r = mine->reserve(u"t%1-o%2"_s.arg(t).arg(i), u"u%1"_s.arg(t), {{u"A"_s, 1, {}}});
                if (!r) {
                    qWarning("%s", qPrintable(r.error().message));
                    ++errors;
                } else if (r->outcome == Outcome::Reserved) {
                    ++reserved;
                } else if (r->outcome == Outcome::OutOfStock) {
                    ++outOfStock;
                } else {
                    qWarning("unexpected %s", qPrintable(outcomeWord(r->outcome)));
                    ++errors;
                }
            }
        });
    // SCRIPT FLUSH from the test's own connection while the crowd runs.
    int flushes = 0;
    while (flushScripts && reserved.load() + outOfStock.load() + errors.load() < threads * perThread) {
        FS_VERIFY_OK(redis.command({"SCRIPT", "FLUSH"}));
        ++flushes;
        QThread::msleep(5);
    }
    for (auto &w : workers)
        w.join();
    if (flushScripts)
        qInfo("SCRIPT FLUSH sent %d times during the run", flushes);

    QCOMPARE(errors.load(), 0);
    QCOMPARE(reserved.load(), 1000);
    QCOMPARE(outOfStock.load(), threads * perThread - 1000);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 0);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 0);
    // Every order's token is on its ledger row.
    auto ledger = engine->book().ledgerOfSku(u"A"_s);
    FS_VERIFY_OK(ledger);
    int reserves = 0;
    for (const LedgerRow &row : *ledger) {
        if (row.operation != u"RESERVE"_s)
            continue;
        ++reserves;
        QVERIFY2(!row.token.isEmpty(), qPrintable(row.order));
    }
    QCOMPARE(reserves, 1000);
    QVERIFY(test::bookHolds(*engine));
}

void TestEngineGate::sameOrderFiveTimes()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    for (int i = 0; i < 5; ++i)
        QCOMPARE(FS_OK(engine->reserve(u"seq"_s, u"u"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    std::latch start(5);
    std::vector<std::thread> ts;
    std::mutex m;
    QSet<QString> tokens;
    std::atomic<int> reserved{0};
    for (int t = 0; t < 5; ++t)
        ts.emplace_back([&] {
            auto mine = test::openEngine(fresh.url(), redis.url());
            start.arrive_and_wait();
            auto r = mine ? mine->reserve(u"par"_s, u"u"_s, {{u"A"_s, 3, {}}}) : Result<ReserveResult>();
            if (r && r->outcome == Outcome::Reserved) {
                ++reserved;
                std::lock_guard lock(m);
                tokens.insert(r->lines.first().token);
            }
        });
    for (auto &t : ts)
        t.join();
    QCOMPARE(reserved.load(), 5);
    QCOMPARE(tokens.size(), 1);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 5);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 5);
    QVERIFY(test::bookHolds(*engine));
}

void TestEngineGate::perUserLimit()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto sale = engine->createSale(u"A"_s, 0, 0, 60, 2);
    FS_VERIFY_OK(sale);
    QCOMPARE(FS_OK(engine->reserve(u"o0"_s, u"alice"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::SaleClosed);
    FS_VERIFY_OK(engine->setSaleStatus(sale->id, SaleStatus::Open));
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"alice"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    const qint64 gateBefore = gateAvailable(*engine, u"A"_s);
    auto over = engine->reserve(u"o2"_s, u"alice"_s, {{u"A"_s, 1, {}}});
    FS_VERIFY_OK(over);
    QCOMPARE(over->outcome, Outcome::LimitExceeded);
    QCOMPARE(gateAvailable(*engine, u"A"_s), gateBefore);
    QVERIFY(!FS_OK(engine->book().orderStatus(u"o2"_s)).has_value());
    // Without a user a flash-sale reserve is bad input.
    auto anonymous = engine->reserve(u"o3"_s, {}, {{u"A"_s, 1, {}}});
    QVERIFY(!anonymous);
    QCOMPARE(anonymous.error().field, u"user"_s);
    QCOMPARE(FS_OK(engine->reserve(u"o4"_s, u"bob"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    // Pause closes the sale for now; start resumes it.
    QCOMPARE(FS_OK(engine->setSaleStatus(sale->id, SaleStatus::Paused)).status, SaleStatus::Paused);
    QCOMPARE(FS_OK(engine->reserve(u"o6"_s, u"dave"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::SaleClosed);
    QCOMPARE(FS_OK(engine->setSaleStatus(sale->id, SaleStatus::Open)).status, SaleStatus::Open);
    QCOMPARE(FS_OK(engine->reserve(u"o6"_s, u"dave"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    FS_VERIFY_OK(engine->setSaleStatus(sale->id, SaleStatus::Stopped));
    QVERIFY(!engine->setSaleStatus(sale->id, SaleStatus::Paused)); // only an open sale pauses
    QCOMPARE(FS_OK(engine->reserve(u"o5"_s, u"carol"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::SaleClosed);
    QVERIFY(test::bookHolds(*engine));
}

void TestEngineGate::bookRefusalCompensatesGate()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 5));
    // The book holds fewer units than the gate believes (a stocktake behind the gate's back).
    FS_VERIFY_OK(engine->database().exec(u"UPDATE buckets SET available = 1, total = 1 WHERE sku = 'A'"_s));
    QCOMPARE(gateAvailable(*engine, u"A"_s), 5);
    auto r = engine->reserve(u"o1"_s, u"u"_s, {{u"A"_s, 3, {}}});
    FS_VERIFY_OK(r);
    QCOMPARE(r->outcome, Outcome::OutOfStock);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 5); // the gate got its 3 units back
    // The buyer was refused although the gate let the reserve through: counted all the same.
    const GateSide side = engine->gateLevels(u"A"_s);
    QCOMPARE(side.counts->outOfStock, 1);
    QCOMPARE(side.counts->reserved, 1);
    QCOMPARE(test::countWarnings(engine->takeWarnings(), WarningKind::RefusalNotCounted), 0);
    QVERIFY(!FS_OK(engine->book().orderStatus(u"o1"_s)).has_value());
    auto open = engine->gate()->openTokens(u"A"_s);
    FS_VERIFY_OK(open);
    QVERIFY(open->isEmpty());
}

void TestEngineGate::missingStockKeyReloads()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 4));
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    FS_VERIFY_OK(redis.command({"HDEL", GateKeys::key(u"A"_s, "gate"), "available"}));
    QCOMPARE(gateAvailable(*engine, u"A"_s), -1);
    auto r = engine->reserve(u"o2"_s, u"u"_s, {{u"A"_s, 1, {}}});
    FS_VERIFY_OK(r);
    QCOMPARE(r->outcome, Outcome::Reserved);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 2);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 2);
    // The operator hears of it (the CLI prints engine warnings on stderr).
    const WarningRing warnings = engine->takeWarnings();
    QCOMPARE(test::countWarnings(warnings, WarningKind::GateRestored, u"A"_s), 1);
    QVERIFY(warnings.items().constFirst().message.contains(u"refilled from the book"_s));
}

void TestEngineGate::gateThatLostItsDataKeepsSaleAndLimit()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto sale = engine->createSale(u"A"_s, 0, 0, 120, 2); // scheduled, 2 units per user
    FS_VERIFY_OK(sale);
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::SaleClosed);
    // Redis loses its data (a restart without persistence): the next reserve finds no stock
    // key and restores the SKU from the book, the sale before the stock.
    FS_VERIFY_OK(redis.command({"FLUSHALL"}));
    QCOMPARE(FS_OK(engine->reserve(u"o2"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::SaleClosed);

    FS_VERIFY_OK(engine->setSaleStatus(sale->id, SaleStatus::Open));
    QCOMPARE(FS_OK(engine->reserve(u"o3"_s, u"u1"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    FS_VERIFY_OK(engine->confirm(u"o3"_s, u"pay-3"_s));
    QCOMPARE(FS_OK(engine->reserve(u"o4"_s, u"u2"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    FS_VERIFY_OK(redis.command({"FLUSHALL"}));
    // u1 bought their 2 units and u2 holds 1: the limit still counts them.
    QCOMPARE(FS_OK(engine->reserve(u"o5"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::LimitExceeded);
    QCOMPARE(FS_OK(engine->reserve(u"o6"_s, u"u2"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::LimitExceeded);
    QCOMPARE(FS_OK(engine->reserve(u"o7"_s, u"u2"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 6);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 6);
    // A rebuild while u1's count is intact does not lower it.
    FS_VERIFY_OK(engine->rebuildGate(u"A"_s));
    QCOMPARE(FS_OK(engine->reserve(u"o8"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::LimitExceeded);
}

void TestEngineGate::bookSaleStatusHasTheLastWord()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto sale = engine->createSale(u"A"_s, 0, 0, 120, 0);
    QVERIFY(sale && engine->setSaleStatus(sale->id, SaleStatus::Open).has_value());
    FS_VERIFY_OK(engine->setSaleStatus(sale->id, SaleStatus::Stopped));
    // The gate missed the stop (it was down at the time): it still has the sale open.
    FS_VERIFY_OK(engine->gate()->setSale(u"A"_s, GateSale{true, 0, 0, 0}));
    QTest::qWait(1100); // past the engine's sale cache
    auto r = engine->reserve(u"o1"_s, u"u1"_s, {{u"A"_s, 2, {}}});
    FS_VERIFY_OK(r);
    QCOMPARE(r->outcome, Outcome::SaleClosed);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 10); // the token the gate issued was given back
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 10);
    QCOMPARE(engine->gateLevels(u"A"_s).counts->saleClosed, 1);

    // A sale the gate cannot open is not opened in the book either.
    auto next = engine->createSale(u"A"_s, 0, 0, 120, 1);
    FS_VERIFY_OK(next);
    redis.stop();
    auto opened = engine->setSaleStatus(next->id, SaleStatus::Open);
    QVERIFY(!opened);
    QCOMPARE(opened.error().code, ErrorCode::Unavailable);
    QCOMPARE(FS_OK(engine->sales().get(next->id)).status, SaleStatus::Scheduled);
}

void TestEngineGate::limitHoldsAfterBookOnlyMode()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"L"_s, 10));
    auto sale = engine->createSale(u"L"_s, 0, 0, 120, 2);
    QVERIFY(sale && engine->setSaleStatus(sale->id, SaleStatus::Open).has_value());
    QCOMPARE(FS_OK(engine->reserve(u"a1"_s, u"alice"_s, {{u"L"_s, 1, {}}})).outcome, Outcome::Reserved);
    FS_VERIFY_OK(engine->setSaleBookOnly(sale->id, true));
    QTest::qWait(1100); // past the engine's sale cache
    QCOMPARE(FS_OK(engine->reserve(u"a2"_s, u"alice"_s, {{u"L"_s, 1, {}}})).outcome, Outcome::Reserved); // book only
    FS_VERIFY_OK(engine->setSaleBookOnly(sale->id, false)); // rebuilds the gate from the book
    QTest::qWait(1100);
    // The gate counted alice's first unit only; the rebuild gave it the book's two.
    QCOMPARE(FS_OK(engine->reserve(u"a3"_s, u"alice"_s, {{u"L"_s, 1, {}}})).outcome, Outcome::LimitExceeded);
    QCOMPARE(FS_OK(engine->reserve(u"b1"_s, u"bob"_s, {{u"L"_s, 2, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(gateAvailable(*engine, u"L"_s), 6);
}

void TestEngineGate::rebuildCountsEachBuyersUnitOnce()
{
    // u1 holds 3 of a limit of 4: one unit booked and settled, one token held with no order
    // (its process died before the book), one booked whose settle has not reached the gate
    // yet. A rebuild counts each once: 3, so u1 may still take one more unit.
    FS_GATED_ENGINE(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto sale = engine->createSale(u"A"_s, 0, 0, 120, 4);
    QVERIFY(sale && engine->setSaleStatus(sale->id, SaleStatus::Open).has_value());
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(engine->gate()->reserve(u"A"_s, u"orphan"_s, u"u1"_s, 1)).code, GateCode::Reserved);
    auto held = engine->gate()->reserve(u"A"_s, u"o2"_s, u"u1"_s, 1);
    QVERIFY(held && held->code == GateCode::Reserved);
    QCOMPARE(FS_OK(engine->book().reserve(u"o2"_s, u"u1"_s, {{u"A"_s, 1, held->token}}, 120)).outcome,
             Outcome::Reserved);
    FS_VERIFY_OK(engine->rebuildGate(u"A"_s)); // waits for the held tokens, then counts
    QCOMPARE(FS_OK(engine->reserve(u"o3"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(engine->reserve(u"o4"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::LimitExceeded);
}

void TestEngineGate::crowdAfterGateLostItsData()
{
    // Redis loses its data in the middle of a sale with a per-user limit; 16 buyers arrive
    // together. One of them restores the gate from the book, the others wait for it; none is
    // refused for the missing key, no limit is passed and nothing is sold twice.
    FS_GATED_ENGINE(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"H"_s, 100));
    auto sale = engine->createSale(u"H"_s, 0, 0, 120, 1);
    QVERIFY(sale && engine->setSaleStatus(sale->id, SaleStatus::Open).has_value());
    for (int i = 0; i < 10; ++i)
        QCOMPARE(FS_OK(engine->reserve(u"early%1"_s.arg(i), u"u%1"_s.arg(i), {{u"H"_s, 1, {}}})).outcome,
                 Outcome::Reserved);
    FS_VERIFY_OK(redis.command({"FLUSHALL"}));
    std::atomic<int> reserved{0}, limited{0}, other{0};
    std::latch go(16);
    std::vector<std::thread> buyers;
    for (int t = 0; t < 16; ++t)
        buyers.emplace_back([&, t] {
            auto mine = test::openEngine(fresh.url(), redis.url());
            go.arrive_and_wait();
            // Users u0..u15: the first ten already hold their one unit.
            auto r = mine ? mine->reserve(u"late%1"_s.arg(t), u"u%1"_s.arg(t), {{u"H"_s, 1, {}}})
                          : Result<ReserveResult>(std::unexpected(Error{}));
            if (r && r->outcome == Outcome::Reserved)
                ++reserved;
            else if (r && r->outcome == Outcome::LimitExceeded)
                ++limited;
            else
                ++other;
        });
    for (auto &b : buyers)
        b.join();
    QCOMPARE(other.load(), 0);
    QCOMPARE(limited.load(), 10);
    QCOMPARE(reserved.load(), 6);
    QCOMPARE(FS_OK(engine->book().levels(u"H"_s)).available, 84);
    QCOMPARE(gateAvailable(*engine, u"H"_s), 84);
    QVERIFY(test::bookHolds(*engine));
}

void TestEngineGate::corruptCountersAreReportedAndReset()
{
    FS_GATED_ENGINE(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"C"_s, 5));
    FS_VERIFY_OK(redis.command({"HSET", GateKeys::key(u"C"_s, "gate"), "n:reserved", "x"}));
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u"_s, {{u"C"_s, 1, {}}})).outcome, Outcome::Reserved); // still sells
    GateSide side = engine->gateLevels(u"C"_s);
    QVERIFY(side.reachable); // the stock is there; only the counters are not
    QCOMPARE(side.available, 4);
    QVERIFY(!side.counts);
    QVERIFY2(side.error.contains(u"not a number"_s), qPrintable(side.error));
    FS_VERIFY_OK(engine->rebuildGate(u"C"_s));
    side = engine->gateLevels(u"C"_s);
    QVERIFY(side.counts.has_value());
    QCOMPARE(side.counts->reserved, 0);
}

void TestEngineGate::idleConnectionClosedByServer()
{
    FS_GATED_ENGINE(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 4));
    FS_VERIFY_OK(redis.command({"CONFIG", "SET", "timeout", "1"}));
    QTest::qWait(2200);
    auto r = engine->reserve(u"o1"_s, u"u"_s, {{u"A"_s, 1, {}}});
    FS_VERIFY_OK(r);
    QCOMPARE(r->outcome, Outcome::Reserved);
}

void TestEngineGate::redisKilledAndRestarted()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    RedisFixture redis;
    QVERIFY(redis.start());
    auto engine = test::openEngine(fresh.url(), redis.url(300));
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 100));
    for (int i = 0; i < 10; ++i)
        QCOMPARE(FS_OK(engine->reserve(u"before-%1"_s.arg(i), u"u"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);

    redis.kill();
    qint64 slowest = 0;
    for (int i = 0; i < 5; ++i) {
        QElapsedTimer t;
        t.start();
        auto r = engine->reserve(u"during-%1"_s.arg(i), u"u"_s, {{u"A"_s, 1, {}}});
        slowest = std::max(slowest, t.elapsed());
        FS_VERIFY_OK(r);
        QCOMPARE(r->outcome, Outcome::GateUnavailable);
    }
    qInfo("slowest gate_unavailable answer: %lld ms", slowest);
    QVERIFY2(slowest < 3000, "a reserve hung on the dead gate");
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 90);

    QVERIFY(redis.restart()); // no persistence: the gate comes back empty
    auto r = engine->reserve(u"after-0"_s, u"u"_s, {{u"A"_s, 1, {}}});
    FS_VERIFY_OK(r);
    QCOMPARE(r->outcome, Outcome::Reserved); // resumes by itself (and reloads the stock key)
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 89);
    auto rebuilt = engine->rebuildGate(u"A"_s);
    FS_VERIFY_OK(rebuilt);
    QCOMPARE(*rebuilt, 89);
    QCOMPARE(gateAvailable(*engine, u"A"_s), FS_OK(engine->book().levels(u"A"_s)).available);
    QVERIFY(test::bookHolds(*engine));
}

void TestEngineGate::bookOnlyWhileGateIsDown()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    RedisFixture redis;
    QVERIFY(redis.start());
    auto engine = test::openEngine(fresh.url(), redis.url(300));
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto sale = engine->createSale(u"A"_s, 0, 0, 60, 3);
    FS_VERIFY_OK(sale);
    FS_VERIFY_OK(engine->setSaleStatus(sale->id, SaleStatus::Open));
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"alice"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);

    redis.kill();
    QCOMPARE(FS_OK(engine->reserve(u"o2"_s, u"alice"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::GateUnavailable);
    FS_VERIFY_OK(engine->setSaleBookOnly(sale->id, true));
    QTest::qWait(1100); // past the engine's sale cache
    QCOMPARE(FS_OK(engine->reserve(u"o2"_s, u"alice"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    // The book enforces the per-user limit itself while the gate is bypassed.
    QCOMPARE(FS_OK(engine->reserve(u"o3"_s, u"alice"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::LimitExceeded);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 7);

    QVERIFY(redis.restart());
    FS_VERIFY_OK(engine->setSaleBookOnly(sale->id, false));
    QCOMPARE(gateAvailable(*engine, u"A"_s), 7); // rebuilt from the book
    QTest::qWait(1100);
    QCOMPARE(FS_OK(engine->reserve(u"o4"_s, u"bob"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 6);
    QVERIFY(test::bookHolds(*engine));
}

void TestEngineGate::releaseAndConfirmTellTheGate()
{
    FS_GATED_ENGINE(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u"_s, {{u"A"_s, 3, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(engine->reserve(u"o2"_s, u"u"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 5);
    QCOMPARE(FS_OK(engine->release(u"o1"_s, u"cancel"_s)).outcome, Outcome::Released);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 8);
    QCOMPARE(FS_OK(engine->release(u"o1"_s, u"cancel"_s)).outcome, Outcome::AlreadyClosed);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 8); // given back once
    QCOMPARE(FS_OK(engine->confirm(u"o2"_s, u"p"_s)).outcome, Outcome::Paid);
    QCOMPARE(gateAvailable(*engine, u"A"_s), 8);
    FS_VERIFY_OK(engine->restock(u"A"_s, 5));
    QCOMPARE(gateAvailable(*engine, u"A"_s), 13);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 13);
    auto open = engine->gate()->openTokens(u"A"_s);
    FS_VERIFY_OK(open);
    QVERIFY(open->isEmpty());
    QVERIFY(test::bookHolds(*engine));
}

void TestEngineGate::expireKilledHalfWayLeavesNothingLocked()
{
    // An expire run killed after the book released its orders and before the gate heard:
    // the next expire gives those units back, not only the reconciler.
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    FS_VERIFY_OK(engine->reserve(u"o1"_s, {}, {{u"A"_s, 2, {}}}, 1));
    FS_VERIFY_OK(engine->reserve(u"o2"_s, {}, {{u"A"_s, 3, {}}}, 1));
    const qint64 later = FS_OK(engine->database().nowMs()) + 60'000;
    QCOMPARE(FS_OK(engine->book().expire(later)).size(), 2); // the book's half only
    QCOMPARE(engine->gateLevels(u"A"_s).available, 5);
    QCOMPARE(FS_OK(engine->expire(later)).size(), 0);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 10);
    QVERIFY(FS_OK(engine->book().gateReleasesDue()).isEmpty());

    // Each order's units go back as soon as its release batch committed, not after the
    // whole run: in batches of one, o3's before o4 is released.
    FS_VERIFY_OK(engine->reserve(u"o3"_s, {}, {{u"A"_s, 1, {}}}, 1));
    FS_VERIFY_OK(engine->reserve(u"o4"_s, {}, {{u"A"_s, 1, {}}}, 1));
    QStringList seen;
    auto run = engine->book().expire(later, 1, [&](const OrderChange &change) {
        seen << u"%1:%2"_s.arg(change.order, orderStatusName(*FS_OK(engine->book().orderStatus(
                                                  seen.isEmpty() ? u"o4"_s : u"o3"_s))));
    });
    FS_VERIFY_OK(run);
    QCOMPARE(seen, (QStringList{u"o3:PENDING"_s, u"o4:CLOSED"_s}));
    QCOMPARE(FS_OK(engine->expire(later)).size(), 0);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 10);
    QVERIFY(test::bookHolds(*engine));
}

QTEST_GUILESS_MAIN(TestEngineGate)
#include "tst_engine_gate.moc"
#include "support/TestChecks.h"
