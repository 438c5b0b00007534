// The book of record under load, races and repeats, on SQLite and PostgreSQL.

#include "Engine.h"
#include "store/Database.h"
#include "bench/NaiveDeduct.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"

#include <QTest>

#include <atomic>
#include <barrier>
#include <latch>
#include <thread>
#include <vector>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

qint64 ledgerRows(Engine &engine, const QString &operation = {})
{
    auto rows = engine.book().ledgerOfSku(u"A"_s);
    if (!rows)
        return -1;
    qint64 n = 0;
    for (const LedgerRow &r : *rows)
        n += operation.isEmpty() || r.operation == operation;
    return n;
}

} // namespace

class TestBook : public QObject {
    Q_OBJECT

private slots:
    void concurrentReserves_data();
    void concurrentReserves();
    void naiveDeductOversells_data();
    void naiveDeductOversells();
    void confirmReleaseRace_data() { test::addBackendRows(); }
    void confirmReleaseRace();
    void repeatedDeliveries_data() { test::addBackendRows(); }
    void repeatedDeliveries();
    void multiLineAllOrNothing_data() { test::addBackendRows(); }
    void multiLineAllOrNothing();
    void multiLineOppositeOrders_data() { test::addBackendRows(); }
    void multiLineOppositeOrders();
    void expiryUsesDatabaseClock_data() { test::addBackendRows(); }
    void expiryUsesDatabaseClock();
    void bucketsBorrow_data() { test::addBackendRows(); }
    void bucketsBorrow();
    void paymentsOnPaidOrder_data() { test::addBackendRows(); }
    void paymentsOnPaidOrder();
    void lineSplitAcrossBuckets_data() { test::addBackendRows(); }
    void lineSplitAcrossBuckets();
    void noFalseSoldOut_data() { test::addBackendRows(); }
    void noFalseSoldOut();
    void rebalanceUnderConcurrentReserves_data() { test::addBackendRows(); }
    void rebalanceUnderConcurrentReserves();
};

void TestBook::concurrentReserves_data()
{
    QTest::addColumn<QString>("backend");
    QTest::addColumn<int>("stock");
    QTest::addColumn<int>("threads");
    QTest::addColumn<int>("perThread");
    for (const QString &b : test::bookBackends()) {
        QTest::addRow("%s 32x100 for 1000", qPrintable(b)) << b << 1000 << 32 << 100;
        QTest::addRow("%s 20x1 for 10", qPrintable(b)) << b << 10 << 20 << 1;
    }
}

void TestBook::concurrentReserves()
{
    QFETCH(QString, backend);
    QFETCH(int, stock);
    QFETCH(int, threads);
    QFETCH(int, perThread);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, stock));

    std::atomic<int> reserved{0}, outOfStock{0}, errors{0};
    std::latch start(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            auto mine = test::openEngine(fresh.url());
            start.arrive_and_wait();
            for (int i = 0; mine && i < perThread; ++i) {
                auto r = mine->reserve(u"t%1-o%2"_s.arg(t).arg(i), u"u%1"_s.arg(t), {{u"A"_s, 1, {}}});
                if (!r) {
                    qWarning("reserve failed: %s", qPrintable(r.error().message));
                    ++errors;
                } else if (r->outcome == Outcome::Reserved) {
                    ++reserved;
                } else if (r->outcome == Outcome::OutOfStock) {
                    ++outOfStock;
                }
            }
            if (!mine)
                errors += perThread;
        });
    }
    for (auto &w : workers)
        w.join();

    QCOMPARE(errors.load(), 0);
    QCOMPARE(reserved.load(), stock);
    QCOMPARE(outOfStock.load(), threads * perThread - stock);
    auto levels = engine->book().levels(u"A"_s);
    FS_VERIFY_OK(levels);
    QCOMPARE(levels->available, 0);
    QCOMPARE(levels->locked, stock);
    QCOMPARE(ledgerRows(*engine, u"RESERVE"_s), stock);
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::naiveDeductOversells_data()
{
    test::addBackendRows();
}

void TestBook::naiveDeductOversells()
{
    // The reason the guarded UPDATE exists: the same load through read-check-write sells
    // more units than there are.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    const int stock = 200, threads = 32, perThread = 25;
    FS_VERIFY_OK(engine->addSku(u"A"_s, stock));

    std::atomic<int> sold{0};
    std::latch start(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            auto db = Database::open(fresh.url());
            start.arrive_and_wait();
            if (!db)
                return;
            NaiveDeduct naive(**db);
            for (int i = 0; i < perThread; ++i) {
                auto r = naive.reserve(u"A"_s, 1);
                if (r && *r)
                    ++sold;
            }
        });
    }
    for (auto &w : workers)
        w.join();
    qInfo("naive read-check-write: %d units sold from a stock of %d (%d oversold)", sold.load(), stock,
          sold.load() - stock);
    QVERIFY2(sold.load() > stock, "the naive deduction did not oversell under 32 threads");
}

void TestBook::confirmReleaseRace()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    const int orders = 500;
    FS_VERIFY_OK(engine->addSku(u"A"_s, orders));
    for (int i = 0; i < orders; ++i) {
        auto r = engine->reserve(u"o%1"_s.arg(i), {}, {{u"A"_s, 1, {}}});
        QVERIFY(r && r->outcome == Outcome::Reserved);
    }

    std::barrier sync(2);
    std::vector<Outcome> confirms(orders), releases(orders);
    std::atomic<int> errors{0};
    std::thread payer([&] {
        auto mine = test::openEngine(fresh.url());
        for (int i = 0; i < orders; ++i) {
            sync.arrive_and_wait();
            auto r = mine ? mine->confirm(u"o%1"_s.arg(i), u"pay-%1"_s.arg(i)) : Result<OrderChange>();
            if (!r) {
                ++errors;
                continue;
            }
            confirms[i] = r->outcome;
        }
    });
    std::thread closer([&] {
        auto mine = test::openEngine(fresh.url());
        for (int i = 0; i < orders; ++i) {
            sync.arrive_and_wait();
            auto r = mine ? mine->release(u"o%1"_s.arg(i), u"timeout"_s) : Result<OrderChange>();
            if (!r) {
                ++errors;
                continue;
            }
            releases[i] = r->outcome;
        }
    });
    payer.join();
    closer.join();
    QCOMPARE(errors.load(), 0);

    int paid = 0, released = 0;
    for (int i = 0; i < orders; ++i) {
        const bool paidWon = confirms[i] == Outcome::Paid && releases[i] == Outcome::AlreadyPaid;
        const bool releaseWon = releases[i] == Outcome::Released && confirms[i] == Outcome::RefundRequired;
        QVERIFY2(paidWon != releaseWon, qPrintable(u"order o%1: confirm %2, release %3"_s.arg(i).arg(
                                            outcomeWord(confirms[i]), outcomeWord(releases[i]))));
        paid += paidWon;
        released += releaseWon;
        auto refunds = engine->book().refundCount(u"o%1"_s.arg(i));
        FS_VERIFY_OK(refunds);
        QCOMPARE(*refunds, releaseWon ? 1 : 0);
    }
    auto levels = engine->book().levels(u"A"_s);
    FS_VERIFY_OK(levels);
    QCOMPARE(levels->sold, paid);
    QCOMPARE(levels->available, released);
    QCOMPARE(levels->locked, 0);
    QCOMPARE(ledgerRows(*engine), 1 + orders * 2);
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::repeatedDeliveries()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));

    // Sequential: the same reserve, confirm and release three times each.
    for (int i = 0; i < 3; ++i) {
        auto r = engine->reserve(u"seq"_s, u"u1"_s, {{u"A"_s, 2, {}}});
        QVERIFY(r && r->outcome == Outcome::Reserved);
    }
    for (int i = 0; i < 3; ++i) {
        auto r = engine->confirm(u"seq"_s, u"pay-1"_s);
        FS_VERIFY_OK(r);
        QCOMPARE(r->outcome, i == 0 ? Outcome::Paid : Outcome::Duplicate);
    }
    FS_VERIFY_OK(engine->reserve(u"rel"_s, {}, {{u"A"_s, 1, {}}}));
    for (int i = 0; i < 3; ++i) {
        auto r = engine->release(u"rel"_s, u"cancel"_s);
        FS_VERIFY_OK(r);
        QCOMPARE(r->outcome, i == 0 ? Outcome::Released : Outcome::AlreadyClosed);
    }
    // Other lines under the same order id: duplicate, nothing moves.
    auto other = engine->reserve(u"seq"_s, u"u1"_s, {{u"A"_s, 3, {}}});
    QVERIFY(other && other->outcome == Outcome::Duplicate);

    // Concurrent: three deliveries of each at once.
    auto concurrently = [&](auto call) {
        std::latch start(3);
        std::vector<std::thread> ts;
        std::atomic<int> failures{0};
        for (int t = 0; t < 3; ++t)
            ts.emplace_back([&] {
                auto mine = test::openEngine(fresh.url());
                start.arrive_and_wait();
                if (!mine || !call(*mine))
                    ++failures;
            });
        for (auto &t : ts)
            t.join();
        return failures.load();
    };
    std::atomic<int> reservedCount{0}, paidCount{0}, releasedCount{0};
    QCOMPARE(concurrently([&](Engine &e) {
                 auto r = e.reserve(u"par"_s, u"u2"_s, {{u"A"_s, 1, {}}});
                 reservedCount += r && r->outcome == Outcome::Reserved;
                 return r.has_value();
             }),
             0);
    QCOMPARE(reservedCount.load(), 3);
    QCOMPARE(concurrently([&](Engine &e) {
                 auto r = e.confirm(u"par"_s, u"pay-2"_s);
                 paidCount += r && r->outcome == Outcome::Paid;
                 return r && (r->outcome == Outcome::Paid || r->outcome == Outcome::Duplicate);
             }),
             0);
    QCOMPARE(paidCount.load(), 1);
    FS_VERIFY_OK(engine->reserve(u"par2"_s, {}, {{u"A"_s, 1, {}}}));
    QCOMPARE(concurrently([&](Engine &e) {
                 auto r = e.release(u"par2"_s, u"risk"_s);
                 releasedCount += r && r->outcome == Outcome::Released;
                 return r && (r->outcome == Outcome::Released || r->outcome == Outcome::AlreadyClosed);
             }),
             0);
    QCOMPARE(releasedCount.load(), 1);

    // One ledger row per operation: initial stock, seq RESERVE+CONFIRM, rel RESERVE+RELEASE,
    // par RESERVE+CONFIRM, par2 RESERVE+RELEASE.
    QCOMPARE(ledgerRows(*engine), 9);
    auto levels = engine->book().levels(u"A"_s);
    FS_VERIFY_OK(levels);
    QCOMPARE(levels->sold, 3);
    QCOMPARE(levels->available, 7);
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::multiLineAllOrNothing()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 5));
    FS_VERIFY_OK(engine->addSku(u"B"_s, 2));
    auto before = engine->book().ledgerCount();
    FS_VERIFY_OK(before);

    auto r = engine->reserve(u"m1"_s, {}, {{u"A"_s, 1, {}}, {u"B"_s, 3, {}}});
    FS_VERIFY_OK(r);
    QCOMPARE(r->outcome, Outcome::OutOfStock);
    QCOMPARE(r->shortSku, u"B"_s);
    QCOMPARE(FS_OK(engine->book().ledgerCount()), *before);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 5);
    QCOMPARE(FS_OK(engine->book().levels(u"B"_s)).available, 2);
    auto status = engine->book().orderStatus(u"m1"_s);
    QVERIFY(status && !status->has_value());
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::multiLineOppositeOrders()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 100));
    FS_VERIFY_OK(engine->addSku(u"B"_s, 100));
    std::atomic<int> reserved{0}, failures{0};
    std::latch start(2);
    auto run = [&](bool abFirst) {
        auto mine = test::openEngine(fresh.url());
        start.arrive_and_wait();
        for (int i = 0; mine && i < 50; ++i) {
            const QList<OrderLine> lines = abFirst ? QList<OrderLine>{{u"A"_s, 1, {}}, {u"B"_s, 1, {}}}
                                                   : QList<OrderLine>{{u"B"_s, 1, {}}, {u"A"_s, 1, {}}};
            auto r = mine->reserve(u"%1-%2"_s.arg(abFirst ? u"ab"_s : u"ba"_s).arg(i), {}, lines);
            if (!r) {
                qWarning("%s", qPrintable(r.error().message));
                ++failures;
            } else {
                reserved += r->outcome == Outcome::Reserved;
            }
        }
    };
    std::thread ab(run, true), ba(run, false);
    ab.join();
    ba.join();
    QCOMPARE(failures.load(), 0);
    QCOMPARE(reserved.load(), 100);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).locked, 100);
    QCOMPARE(FS_OK(engine->book().levels(u"B"_s)).locked, 100);
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::expiryUsesDatabaseClock()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    FS_VERIFY_OK(engine->reserve(u"short"_s, {}, {{u"A"_s, 1, {}}}, 1));
    auto longHold = engine->reserve(u"long"_s, {}, {{u"A"_s, 2, {}}}, 60);
    QVERIFY(longHold && longHold->outcome == Outcome::Reserved);
    QTest::qWait(1200);

    // The database's clock decides: the short hold is due, the long one is not.
    auto expired = engine->expire();
    FS_VERIFY_OK(expired);
    QCOMPARE(expired->size(), 1);
    QCOMPARE(expired->first().order, u"short"_s);
    QCOMPARE(FS_OK(engine->book().orderStatus(u"long"_s)), std::optional(OrderStatus::Pending));

    // A caller whose clock runs 90 s ahead gets no say unless it passes its "now" on purpose.
    const qint64 callerNow = QDateTime::currentMSecsSinceEpoch() + 90'000;
    QCOMPARE(FS_OK(engine->expire()).size(), 0);
    QCOMPARE(FS_OK(engine->book().orderStatus(u"long"_s)), std::optional(OrderStatus::Pending));
    auto forced = engine->expire(callerNow);
    FS_VERIFY_OK(forced);
    QCOMPARE(forced->size(), 1);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 10);
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::bucketsBorrow()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 3, 3));
    // Three orders that all prefer bucket 0: two of them must borrow from another bucket.
    QStringList orders;
    for (int i = 0; orders.size() < 3; ++i)
        if (Book::preferredBucket(u"o%1"_s.arg(i), 3) == 0)
            orders << u"o%1"_s.arg(i);
    std::atomic<int> reserved{0};
    std::latch start(3);
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; ++t)
        ts.emplace_back([&, t] {
            auto mine = test::openEngine(fresh.url());
            start.arrive_and_wait();
            auto r = mine ? mine->reserve(orders.at(t), {}, {{u"A"_s, 1, {}}}) : Result<ReserveResult>();
            reserved += r && r->outcome == Outcome::Reserved;
        });
    for (auto &t : ts)
        t.join();
    QCOMPARE(reserved.load(), 3);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 0);
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::paymentsOnPaidOrder()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 1));
    FS_VERIFY_OK(engine->reserve(u"o"_s, {}, {{u"A"_s, 1, {}}}));
    QCOMPARE(FS_OK(engine->confirm(u"o"_s, u"p1"_s)).outcome, Outcome::Paid);
    // A second, different payment for a paid order is a double charge: refund it, once.
    QCOMPARE(FS_OK(engine->confirm(u"o"_s, u"p2"_s)).outcome, Outcome::RefundRequired);
    QCOMPARE(FS_OK(engine->confirm(u"o"_s, u"p2"_s)).outcome, Outcome::RefundRequired);
    QCOMPARE(FS_OK(engine->book().refundCount(u"o"_s)), 1);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).sold, 1);
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::lineSplitAcrossBuckets()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 3, 3)); // 1 unit in each of 3 buckets
    auto r = engine->reserve(u"two"_s, {}, {{u"A"_s, 2, {}}});
    FS_VERIFY_OK(r);
    QCOMPARE(r->outcome, Outcome::Reserved);
    auto rows = engine->book().ledgerOfOrder(u"two"_s);
    FS_VERIFY_OK(rows);
    QCOMPARE(rows->size(), 2); // one RESERVE row per bucket it took from
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).locked, 2);
    // The same order again: answered from the book, nothing moves.
    QCOMPARE(FS_OK(engine->reserve(u"two"_s, {}, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(engine->reserve(u"more"_s, {}, {{u"A"_s, 2, {}}})).outcome, Outcome::OutOfStock);
    QCOMPARE(FS_OK(engine->confirm(u"two"_s, u"p"_s)).outcome, Outcome::Paid);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).sold, 2);
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::noFalseSoldOut()
{
    // A SKU never answers out_of_stock while its buckets together could serve the line.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 37, 4));
    qint64 left = 37;
    int i = 0;
    for (qint64 qty : {5, 1, 9, 2, 7, 3, 8, 1, 1}) {
        auto r = engine->reserve(u"o%1"_s.arg(i++), {}, {{u"A"_s, qty, {}}});
        FS_VERIFY_OK(r);
        QCOMPARE(r->outcome, qty <= left ? Outcome::Reserved : Outcome::OutOfStock);
        if (qty <= left)
            left -= qty;
    }
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, left);
    QVERIFY(test::bookHolds(*engine));
}

void TestBook::rebalanceUnderConcurrentReserves()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    const int stock = 300;
    FS_VERIFY_OK(engine->addSku(u"A"_s, stock, 4));
    std::atomic<int> reserved{0}, errors{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> buyers;
    for (int t = 0; t < 6; ++t)
        buyers.emplace_back([&, t] {
            auto mine = test::openEngine(fresh.url());
            for (int i = 0; mine && i < 60; ++i) {
                auto r = mine->reserve(u"t%1-%2"_s.arg(t).arg(i), {}, {{u"A"_s, 1 + i % 3, {}}});
                if (!r) {
                    qWarning("%s", qPrintable(r.error().message));
                    ++errors;
                } else if (r->outcome == Outcome::Reserved) {
                    reserved += 1 + i % 3;
                }
            }
        });
    std::thread mover([&] {
        auto mine = test::openEngine(fresh.url());
        for (int i = 0; mine && !stop; ++i) {
            if (i % 5 == 4) {
                if (auto r = mine->book().setBucketCount(u"A"_s, 2 + i % 7); !r)
                    ++errors;
            } else if (auto r = mine->book().rebalance(u"A"_s, i % 2, 1 - i % 2, 1); !r && r.error().field != u"qty"_s) {
                qWarning("%s", qPrintable(r.error().message));
                ++errors;
            }
        }
    });
    for (auto &b : buyers)
        b.join();
    stop = true;
    mover.join();
    QCOMPARE(errors.load(), 0);
    auto levels = engine->book().levels(u"A"_s);
    FS_VERIFY_OK(levels);
    QCOMPARE(levels->locked, reserved.load());
    QCOMPARE(levels->total, stock);
    QCOMPARE(levels->available, stock - reserved.load());
    QVERIFY(test::bookHolds(*engine));
}

QTEST_GUILESS_MAIN(TestBook)
#include "tst_book.moc"
#include "support/TestChecks.h"
