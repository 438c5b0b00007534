// The book's batches (group commit): many orders in one transaction, each with its own
// outcome; concurrent batch writers on one hot row; a COMMIT whose answer is lost; the
// book writers. On SQLite and PostgreSQL.

#include "Engine.h"
#include "store/BookSql.h"
#include "store/BookWriters.h"
#include "store/Database.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/TestChecks.h"

#include <QElapsedTimer>
#include <QFile>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <latch>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// FLASHSTOCK_FULL_TESTS=1 runs the acceptance sizes; the default is a short mode for CI.
bool fullMode() { return qEnvironmentVariableIntValue("FLASHSTOCK_FULL_TESTS") == 1; }

qint64 ledgerRowsOf(Book &book, const QString &order, const QString &operation)
{
    auto rows = book.ledgerOfOrder(order);
    if (!rows)
        return -1;
    return std::count_if(rows->cbegin(), rows->cend(), [&](const LedgerRow &r) { return r.operation == operation; });
}

/// Fails the named orders' part of a batch, once each (Database::setWriteFaults).
class FailOrders : public WriteFaults {
public:
    explicit FailOrders(std::set<QString> orders)
        : m_orders(std::move(orders))
    {
    }
    bool failBeforeCommit() override { return false; }
    bool failOrder(const QString &order) override
    {
        std::lock_guard lock(m_mutex);
        return m_orders.erase(order) > 0;
    }

private:
    std::mutex m_mutex;
    std::set<QString> m_orders;
};

/// Kills the connection whose COMMIT is about to be sent, from another connection: the
/// real server's answer to that COMMIT is lost. With `duringCommit`, the kill waits until
/// the COMMIT is in flight and waiting for a synchronous standby that never comes (so the
/// transaction has committed locally, and the client cannot know it).
class TerminateAtCommit : public WriteFaults {
public:
    TerminateAtCommit(DbUrl url, qint64 victimPid, bool duringCommit)
        : m_url(std::move(url))
        , m_pid(victimPid)
        , m_during(duringCommit)
    {
    }
    ~TerminateAtCommit() override { join(); }
    bool failBeforeCommit() override { return false; }
    void beforeCommit() override
    {
        if (!std::exchange(m_armed, false))
            return;
        m_killer = std::thread([this] { kill(); });
        if (!m_during)
            join(); // terminated before the COMMIT goes out
    }
    void join()
    {
        if (m_killer.joinable())
            m_killer.join();
    }
    bool fired() const { return m_fired; }
    QString problem() const { return m_problem; }

private:
    void kill()
    {
        auto db = Database::open(m_url);
        if (!db) {
            m_problem = db.error().message;
            return;
        }
        QElapsedTimer t;
        t.start();
        while (m_during && t.elapsed() < 10000) {
            auto w = (*db)->exec(u"SELECT wait_event FROM pg_stat_activity WHERE pid = ?"_s, {m_pid});
            if (w && !w->isEmpty() && w->first().at(0).toString() == u"SyncRep"_s)
                break;
            QThread::msleep(2);
        }
        auto r = (*db)->exec(u"SELECT pg_terminate_backend(?)"_s, {m_pid});
        if (!r) {
            m_problem = r.error().message;
            return;
        }
        // Gone for good before the victim goes on.
        while (t.elapsed() < 10000) {
            auto w = (*db)->exec(u"SELECT count(*) FROM pg_stat_activity WHERE pid = ?"_s, {m_pid});
            if (w && w->first().at(0).toLongLong() == 0)
                break;
            QThread::msleep(2);
        }
        m_fired = true;
    }

    DbUrl m_url;
    qint64 m_pid;
    bool m_during;
    bool m_armed = true;
    std::atomic<bool> m_fired{false};
    QString m_problem;
    std::thread m_killer;
};

/// Runs `statements` unprepared, in turn, on a connection of its own to the PostgreSQL book
/// at `url` (for what QtSql cannot prepare: ALTER SYSTEM, EXPLAIN). Empty on success, else
/// the error; `rows` gets the first column of the last statement's rows.
QString execUnprepared(const DbUrl &url, const QStringList &statements, QStringList *rows = nullptr)
{
    const QString name = u"fs-test-unprepared"_s;
    QString error;
    {
        QSqlDatabase db = addPostgresConnection(url, name);
        if (!db.open()) {
            error = db.lastError().text();
        } else {
            QSqlQuery q(db);
            for (const QString &statement : statements) {
                if (!q.exec(statement)) {
                    error = q.lastError().text();
                    break;
                }
            }
            while (error.isEmpty() && rows && q.next())
                *rows << q.value(0).toString();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return error;
}

/// Runs an ALTER SYSTEM statement (it cannot be prepared) and reloads the server's
/// configuration; empty on success, else the error.
QString alterSystem(const DbUrl &url, const QString &statement)
{
    return execUnprepared(url, {statement, u"SELECT pg_reload_conf()"_s});
}

} // namespace

class TestBookBatch : public QObject {
    Q_OBJECT

private slots:
    void mixedBatch_data() { test::addBackendRows(); }
    void mixedBatch();
    void plainOrdersTakeFewStatements_data() { test::addBackendRows(); }
    void plainOrdersTakeFewStatements();
    void confirmReleaseAndExpiryBatches_data() { test::addBackendRows(); }
    void confirmReleaseAndExpiryBatches();
    void hotRowConcurrentBatches_data() { test::addBackendRows(); }
    void hotRowConcurrentBatches();
    void commitLost_data();
    void commitLost();
    void writersGroupCommit_data() { test::addBackendRows(); }
    void writersGroupCommit();
    void writersCheckpointTheWal();
    void existingOrdersUseTheIndex();
    void lookUpsArePlannedForTheBookAsItIs();
    void actorsTravelWithTheirOrders_data() { test::addBackendRows(); }
    void actorsTravelWithTheirOrders();
};

void TestBookBatch::mixedBatch()
{
    // 200 orders, every tenth bad in a different way; the others commit in the same transaction.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    Book &book = engine->book();
    FS_VERIFY_OK(book.addSku(u"A"_s, 1000, 1));
    FS_VERIFY_OK(book.addSku(u"EMPTY"_s, 0, 1));
    FS_VERIFY_OK(book.addSku(u"L"_s, 100, 1));
    // Users who already hold the per-user limit of L, and orders that exist with other lines.
    for (int k = 0; k < 4; ++k) {
        FS_VERIFY_OK(book.reserve(u"held-%1"_s.arg(k), u"limited-%1"_s.arg(k), {{u"L"_s, 2, {}}}, 300));
        FS_VERIFY_OK(book.reserve(u"pre-%1"_s.arg(k), u"u"_s, {{u"A"_s, 1, {}}}, 300));
    }
    const auto before = FS_OK(book.levels(u"A"_s));
    const qint64 ledgerBefore = FS_OK(book.ledgerCount());

    enum class Bad { None, OutOfStock, Repeat, UnknownSku, OverLimit, OtherLines, Failing };
    QList<ReserveOrder> orders;
    QList<Bad> kinds;
    std::set<QString> failing;
    for (int i = 0; i < 200; ++i) {
        ReserveOrder o{u"o-%1"_s.arg(i), u"user-%1"_s.arg(i), {{u"A"_s, 1, u"t-%1"_s.arg(i)}}, 300, {}};
        Bad kind = Bad::None;
        if (i % 10 == 9) {
            const int k = (i / 10) % 6;
            const int n = i / 60;
            switch (k) {
            case 0: kind = Bad::OutOfStock; o.lines = {{u"A"_s, 1, {}}, {u"EMPTY"_s, 1, {}}}; break;
            case 1: kind = Bad::Repeat; o = orders.last(); break; // the same order again in the batch
            case 2: kind = Bad::UnknownSku; o.lines = {{u"NO-SUCH-SKU"_s, 1, {}}}; break;
            case 3:
                kind = Bad::OverLimit;
                o.user = u"limited-%1"_s.arg(n);
                o.lines = {{u"A"_s, 1, {}}, {u"L"_s, 1, {}}};
                o.userLimits.insert(u"L"_s, 2);
                break;
            case 4: kind = Bad::OtherLines; o.order = u"pre-%1"_s.arg(n); o.lines = {{u"A"_s, 2, {}}}; break;
            case 5: kind = Bad::Failing; failing.insert(o.order); break;
            }
        }
        orders << o;
        kinds << kind;
    }
    FailOrders faults(failing);
    engine->database().setWriteFaults(&faults);
    const QList<Result<ReserveResult>> answers = book.reserveBatch(orders);
    engine->database().setWriteFaults(nullptr);
    QCOMPARE(answers.size(), orders.size());

    int good = 0;
    for (int i = 0; i < orders.size(); ++i) {
        const Result<ReserveResult> &a = answers.at(i);
        const QString what = u"order %1 (#%2)"_s.arg(orders.at(i).order).arg(i);
        switch (kinds.at(i)) {
        case Bad::None:
            QVERIFY2(a && a->outcome == Outcome::Reserved, qPrintable(what));
            QCOMPARE(a->lines.size(), 1);
            ++good;
            QCOMPARE(ledgerRowsOf(book, orders.at(i).order, u"RESERVE"_s), 1);
            break;
        case Bad::OutOfStock:
            QVERIFY2(a && a->outcome == Outcome::OutOfStock && a->shortSku == u"EMPTY"_s, qPrintable(what));
            QVERIFY(!FS_OK(book.orderStatus(orders.at(i).order)).has_value());
            break;
        case Bad::Repeat:
            QVERIFY2(a && a->outcome == Outcome::Reserved, qPrintable(what));
            QCOMPARE(a->lines.first().token, orders.at(i).lines.first().token);
            QCOMPARE(ledgerRowsOf(book, orders.at(i).order, u"RESERVE"_s), 1);
            break;
        case Bad::UnknownSku:
            QVERIFY2(!a && a.error().code == ErrorCode::InvalidArgument && a.error().field == u"sku"_s, qPrintable(what));
            QVERIFY(!FS_OK(book.orderStatus(orders.at(i).order)).has_value());
            break;
        case Bad::OverLimit:
            QVERIFY2(a && a->outcome == Outcome::LimitExceeded && a->shortSku == u"L"_s, qPrintable(what));
            QVERIFY(!FS_OK(book.orderStatus(orders.at(i).order)).has_value());
            break;
        case Bad::OtherLines:
            QVERIFY2(a && a->outcome == Outcome::Duplicate, qPrintable(what));
            QCOMPARE(ledgerRowsOf(book, orders.at(i).order, u"RESERVE"_s), 1);
            break;
        case Bad::Failing:
            QVERIFY2(!a && a.error().code == ErrorCode::Unavailable, qPrintable(what));
            QVERIFY(!FS_OK(book.orderStatus(orders.at(i).order)).has_value());
            break;
        }
    }
    QCOMPARE(good, 180);
    const auto after = FS_OK(book.levels(u"A"_s));
    QCOMPARE(after.available, before.available - good);
    QCOMPARE(after.locked, before.locked + good);
    QCOMPARE(FS_OK(book.levels(u"L"_s)).locked, 8); // the four earlier holds only
    QCOMPARE(FS_OK(book.levels(u"EMPTY"_s)).locked, 0);
    QCOMPARE(FS_OK(book.ledgerCount()), ledgerBefore + good);
    QVERIFY(test::bookHolds(*engine));

    // The same batch again moves nothing and answers the same.
    const QList<Result<ReserveResult>> again = book.reserveBatch(orders);
    for (int i = 0; i < orders.size(); ++i)
        if (kinds.at(i) == Bad::None)
            QVERIFY(again.at(i) && again.at(i)->outcome == Outcome::Reserved);
    // The orders whose statements failed go through now.
    QCOMPARE(FS_OK(book.ledgerCount()), ledgerBefore + good + qint64(std::count(kinds.cbegin(), kinds.cend(), Bad::Failing)));
    QVERIFY(test::bookHolds(*engine));
}

void TestBookBatch::plainOrdersTakeFewStatements()
{
    // A batch of plain one-line orders costs a few statements for all of them, on both
    // backends (Book::reserveGrouped; PostgreSQL's one statement each, sql::reserveOneLine,
    // would be 100 here); the ledger reads as if each order had run alone, in arrival order.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    Book &book = engine->book();
    FS_VERIFY_OK(book.addSku(u"A"_s, 1000, 4));
    FS_VERIFY_OK(book.addSku(u"B"_s, 1000, 1));
    FS_VERIFY_OK(book.reserve(u"pre"_s, u"u"_s, {{u"B"_s, 3, {}}}, 300));
    QList<ReserveOrder> orders;
    // Some users carry what JSON and SQL literals escape; some orders name no user.
    auto userOf = [](int i) {
        return i % 10 == 0 ? u"o'brien \"q\" back\\slash %1 é"_s.arg(i) : i % 10 == 5 ? QString() : u"user-%1"_s.arg(i);
    };
    for (int i = 0; i < 100; ++i)
        orders << ReserveOrder{u"o-%1"_s.arg(i), userOf(i), {{i % 3 ? u"A"_s : u"B"_s, 1 + i % 2, u"t-%1"_s.arg(i)}},
                               60 + i, {}};
    const qint64 statementsBefore = engine->database().statementsRun();
    const QList<Result<ReserveResult>> answers = book.reserveBatch(orders);
    const qint64 statements = engine->database().statementsRun() - statementsBefore;
    qInfo("%d orders in %lld statements", int(orders.size()), statements);
    QVERIFY2(statements <= 20, qPrintable(QString::number(statements)));
    qint64 units = 0;
    for (int i = 0; i < orders.size(); ++i) {
        QVERIFY2(answers.at(i) && answers.at(i)->outcome == Outcome::Reserved, qPrintable(orders.at(i).order));
        QCOMPARE(answers.at(i)->lines.first().token, orders.at(i).lines.first().token);
        const OrderView view = FS_OK(book.order(orders.at(i).order));
        QCOMPARE(view.status, OrderStatus::Pending);
        QCOMPARE(view.user, orders.at(i).user);
        QCOMPARE(view.expiresAtMs - view.createdAtMs, orders.at(i).holdSeconds * 1000);
        QCOMPARE(answers.at(i)->expiresAtMs, view.expiresAtMs);
        units += orders.at(i).lines.first().qty;
    }
    QCOMPARE(FS_OK(book.levels(u"A"_s)).locked + FS_OK(book.levels(u"B"_s)).locked, units + 3);
    // Each bucket's RESERVE rows chain: one's levels after are the next one's before.
    for (const QString &sku : {u"A"_s, u"B"_s}) {
        QHash<int, BucketLevels> last;
        for (const LedgerRow &row : FS_OK(book.ledgerOfSku(sku))) {
            QCOMPARE(row.after.available, row.before.available + row.deltaAvailable);
            QCOMPARE(row.after.locked, row.before.locked + row.deltaLocked);
            if (last.contains(row.bucket)) {
                QCOMPARE(row.before.available, last.value(row.bucket).available);
                QCOMPARE(row.before.locked, last.value(row.bucket).locked);
            }
            last.insert(row.bucket, row.after);
        }
    }
    QVERIFY(test::bookHolds(*engine));
    // A repeat, an existing order and more than a bucket holds, in one batch: each its own answer.
    FS_VERIFY_OK(book.addSku(u"C"_s, 5, 1));
    QList<ReserveOrder> more{orders.at(0), ReserveOrder{u"pre"_s, u"u"_s, {{u"B"_s, 1, {}}}, 300, {}}};
    for (int i = 0; i < 8; ++i)
        more << ReserveOrder{u"c-%1"_s.arg(i), {}, {{u"C"_s, 1, {}}}, 300, {}};
    more << more.last();
    const QList<Result<ReserveResult>> second = book.reserveBatch(more);
    QVERIFY(second.at(0) && second.at(0)->outcome == Outcome::Reserved);
    QVERIFY(second.at(1) && second.at(1)->outcome == Outcome::Duplicate);
    for (int i = 2; i < 10; ++i)
        QCOMPARE(second.at(i)->outcome, i < 7 ? Outcome::Reserved : Outcome::OutOfStock);
    QCOMPARE(second.at(10)->outcome, Outcome::OutOfStock); // c-7 again: still not in the book
    QCOMPARE(FS_OK(book.levels(u"C"_s)).available, 0);
    QVERIFY(test::bookHolds(*engine));
}

void TestBookBatch::confirmReleaseAndExpiryBatches()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    Book &book = engine->book();
    FS_VERIFY_OK(book.addSku(u"A"_s, 100, 4));
    FS_VERIFY_OK(book.addSku(u"B"_s, 100, 1));
    QList<ReserveOrder> orders;
    for (int i = 0; i < 60; ++i)
        orders << ReserveOrder{u"o%1"_s.arg(i), {}, {{u"A"_s, 1, {}}, {u"B"_s, 1, {}}}, i < 40 ? 1 : 300, {}};
    for (const auto &r : book.reserveBatch(orders))
        QVERIFY(r && r->outcome == Outcome::Reserved);

    // Confirms: 10 pay, the same payment twice, an unknown order, a bad reference.
    QList<FinishOrder> pays;
    for (int i = 40; i < 50; ++i)
        pays << FinishOrder{u"o%1"_s.arg(i), u"pay-%1"_s.arg(i)};
    pays << FinishOrder{u"o40"_s, u"pay-40"_s} << FinishOrder{u"nobody"_s, u"pay-x"_s} << FinishOrder{u"o41"_s, QString()};
    const auto paid = book.confirmBatch(pays);
    for (int i = 0; i < 10; ++i)
        QVERIFY(paid.at(i) && paid.at(i)->outcome == Outcome::Paid);
    QVERIFY(paid.at(10) && paid.at(10)->outcome == Outcome::Duplicate);
    QVERIFY(!paid.at(11) && paid.at(11).error().field == u"order"_s);
    QVERIFY(!paid.at(12) && paid.at(12).error().field == u"payment"_s);

    // Releases: 10 cancel, a paid one, one twice.
    QList<FinishOrder> cancels;
    for (int i = 50; i < 60; ++i)
        cancels << FinishOrder{u"o%1"_s.arg(i), u"cancel"_s};
    cancels << FinishOrder{u"o45"_s, u"cancel"_s} << FinishOrder{u"o50"_s, u"cancel"_s};
    const auto released = book.releaseBatch(cancels);
    for (int i = 0; i < 10; ++i)
        QVERIFY(released.at(i) && released.at(i)->outcome == Outcome::Released);
    QVERIFY(released.at(10) && released.at(10)->outcome == Outcome::AlreadyPaid);
    QVERIFY(released.at(11) && released.at(11)->outcome == Outcome::AlreadyClosed);

    // Expiry: the 40 one-second holds, in batches of 7, oldest first.
    QTest::qWait(1100);
    const auto expired = FS_OK(book.expire(std::nullopt, 7));
    QCOMPARE(expired.size(), 40);
    for (int i = 0; i < 40; ++i)
        QCOMPARE(FS_OK(book.orderStatus(u"o%1"_s.arg(i))), std::optional(OrderStatus::Closed));
    const auto a = FS_OK(book.levels(u"A"_s));
    QCOMPARE(a.sold, 10);
    QCOMPARE(a.locked, 0);
    QCOMPARE(a.available, 90);
    QCOMPARE(ledgerRowsOf(book, u"o40"_s, u"CONFIRM"_s), 2);
    QVERIFY(test::bookHolds(*engine));
}

void TestBookBatch::hotRowConcurrentBatches()
{
    // 32 writers, each with its own connection, send batches of one hot row (every third
    // order with a second SKU, so batches lock two rows): exactly the stock is reserved, no
    // deadlock, the invariants hold.
    QFETCH(QString, backend);
    const bool full = fullMode();
    const int writers = 32, orders = full ? 10000 : 1000, stock = orders / 2, batch = full ? 40 : 10;
    if (!full)
        qInfo("short mode: %d orders for %d units (FLASHSTOCK_FULL_TESTS=1: 10000 for 5000)", orders, stock);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->book().addSku(u"HOT"_s, stock, 1));
    FS_VERIFY_OK(engine->book().addSku(u"COLD"_s, orders, 1));

    std::atomic<int> reserved{0}, outOfStock{0}, errors{0};
    std::atomic<int> next{0};
    std::latch start(writers);
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w) {
        threads.emplace_back([&, w] {
            auto db = Database::open(fresh.url());
            start.arrive_and_wait();
            if (!db) {
                ++errors;
                return;
            }
            Book book(**db, Actor{u"tester"_s, u"test"_s});
            for (;;) {
                const int first = next.fetch_add(batch);
                if (first >= orders)
                    break;
                QList<ReserveOrder> mine;
                for (int i = first; i < std::min(orders, first + batch); ++i) {
                    ReserveOrder o{u"w%1-o%2"_s.arg(w).arg(i), {}, {{u"HOT"_s, 1, {}}}, 300, {}};
                    if (i % 3 == 0)
                        o.lines.prepend(OrderLine{u"COLD"_s, 1, {}});
                    mine << o;
                }
                for (const auto &r : book.reserveBatch(mine)) {
                    if (!r) {
                        qWarning("reserve failed: %s", qPrintable(r.error().message));
                        ++errors;
                    } else if (r->outcome == Outcome::Reserved) {
                        ++reserved;
                    } else if (r->outcome == Outcome::OutOfStock) {
                        ++outOfStock;
                    }
                }
            }
        });
    }
    for (auto &t : threads)
        t.join();
    QCOMPARE(errors.load(), 0);
    QCOMPARE(reserved.load(), stock);
    QCOMPARE(outOfStock.load(), orders - stock);
    const auto hot = FS_OK(engine->book().levels(u"HOT"_s));
    QCOMPARE(hot.available, 0);
    QCOMPARE(hot.locked, stock);
    QVERIFY(test::bookHolds(*engine));
}

void TestBookBatch::commitLost_data()
{
    QTest::addColumn<bool>("committed");
    QTest::newRow("killed before COMMIT arrives") << false;
    QTest::newRow("killed while COMMIT waits (committed locally)") << true;
}

void TestBookBatch::commitLost()
{
    // A real PostgreSQL backend terminated at COMMIT: nobody knows whether the batch
    // committed, so the book runs each order again on its own and answers what it holds.
    QFETCH(bool, committed);
    FS_FRESH_BOOK(fresh, u"postgresql"_s);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    Book &control = engine->book();
    FS_VERIFY_OK(control.addSku(u"A"_s, 30, 1));
    FS_VERIFY_OK(control.addSku(u"B"_s, 100, 1));

    auto victim = FS_OK(Database::open(fresh.url()));
    Book book(*victim, Actor{u"tester"_s, u"test"_s});
    const qint64 pid = FS_OK(victim->exec(u"SELECT pg_backend_pid()"_s)).first().at(0).toLongLong();
    auto restore = qScopeGuard([&] {
        if (committed)
            (void)alterSystem(fresh.url(), u"ALTER SYSTEM RESET synchronous_standby_names"_s);
    });
    if (committed) {
        // COMMIT waits for a synchronous standby that does not exist, with the commit already
        // written locally; only the victim's session asks for that wait.
        const QString serverDefault = FS_OK(engine->database().exec(u"SELECT setting FROM pg_settings "
                                                                    u"WHERE name = 'synchronous_commit'"_s))
                                          .first()
                                          .at(0)
                                          .toString();
        if (serverDefault != u"off"_s && serverDefault != u"local"_s)
            QSKIP("the test server commits synchronously for every session; this case needs synchronous_commit=off");
        const QString e = alterSystem(fresh.url(), u"ALTER SYSTEM SET synchronous_standby_names = 'flashstock_nobody'"_s);
        QVERIFY2(e.isEmpty(), qPrintable(e));
        QTest::qWait(200);
        FS_VERIFY_OK(victim->exec(u"SELECT set_config('synchronous_commit', 'on', false)"_s));
    }

    QList<ReserveOrder> orders;
    for (int i = 0; i < 50; ++i)
        orders << ReserveOrder{u"o%1"_s.arg(i), {}, {{u"A"_s, 1, u"tok-%1"_s.arg(i)}, {u"B"_s, 1, {}}}, 300, {}};
    TerminateAtCommit kill(fresh.url(), pid, committed);
    victim->setWriteFaults(&kill);
    const QList<Result<ReserveResult>> answers = book.reserveBatch(orders);
    kill.join();
    victim->setWriteFaults(nullptr);
    QVERIFY2(kill.problem().isEmpty(), qPrintable(kill.problem()));
    QVERIFY(kill.fired());

    // Every answer is what the book holds.
    int reserved = 0;
    for (int i = 0; i < orders.size(); ++i) {
        FS_VERIFY_OK(answers.at(i));
        const auto status = FS_OK(control.orderStatus(orders.at(i).order));
        if (answers.at(i)->outcome == Outcome::Reserved) {
            ++reserved;
            QCOMPARE(status, std::optional(OrderStatus::Pending));
            QCOMPARE(ledgerRowsOf(control, orders.at(i).order, u"RESERVE"_s), 2);
            QCOMPARE(answers.at(i)->lines.first().token, u"tok-%1"_s.arg(i));
        } else {
            QCOMPARE(answers.at(i)->outcome, Outcome::OutOfStock);
            QVERIFY(!status.has_value());
        }
    }
    QCOMPARE(reserved, 30);
    QCOMPARE(FS_OK(control.levels(u"A"_s)).locked, 30);

    // A confirm batch that loses its COMMIT the same way: paid once each, answered paid.
    QList<FinishOrder> pays;
    for (int i = 0; i < 30; ++i)
        pays << FinishOrder{u"o%1"_s.arg(i), u"pay-%1"_s.arg(i)};
    const qint64 pid2 = FS_OK(victim->exec(u"SELECT pg_backend_pid()"_s)).first().at(0).toLongLong();
    if (committed)
        FS_VERIFY_OK(victim->exec(u"SELECT set_config('synchronous_commit', 'on', false)"_s));
    TerminateAtCommit kill2(fresh.url(), pid2, committed);
    victim->setWriteFaults(&kill2);
    const auto paid = book.confirmBatch(pays);
    kill2.join();
    victim->setWriteFaults(nullptr);
    QVERIFY(kill2.fired());
    for (int i = 0; i < 30; ++i) {
        QVERIFY2(paid.at(i) && paid.at(i)->outcome == Outcome::Paid, qPrintable(pays.at(i).order));
        QCOMPARE(ledgerRowsOf(control, pays.at(i).order, u"CONFIRM"_s), 2);
    }

    // Replays are idempotent: the same batches again move nothing.
    const qint64 rows = FS_OK(control.ledgerCount());
    for (const auto &r : book.reserveBatch(orders))
        QVERIFY(r);
    for (const auto &r : book.confirmBatch(pays))
        QVERIFY(r && r->outcome == Outcome::Duplicate);
    QCOMPARE(FS_OK(control.ledgerCount()), rows);
    QCOMPARE(FS_OK(control.levels(u"A"_s)).sold, 30);
    QVERIFY(test::bookHolds(*engine));
}

void TestBookBatch::writersGroupCommit()
{
    // Engines on 32 threads send their book work to 4 writers: every answer exact, batches
    // form by themselves (fewer transactions than orders), the invariants hold.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    const int clients = 32, each = 20, stock = clients * each / 2;
    FS_VERIFY_OK(engine->addSku(u"HOT"_s, stock));
    BookWriters writers(fresh.url(), Actor{u"tester"_s, u"test"_s}, 4);
    FS_VERIFY_OK(writers.start());

    std::atomic<int> reserved{0}, outOfStock{0}, paid{0}, errors{0};
    std::latch start(clients);
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back([&, c] {
            auto mine = test::openEngine(fresh.url());
            start.arrive_and_wait();
            if (!mine) {
                ++errors;
                return;
            }
            mine->useBookWriters(&writers);
            for (int i = 0; i < each; ++i) {
                const QString order = u"c%1-%2"_s.arg(c).arg(i);
                auto r = mine->reserve(order, {}, {{u"HOT"_s, 1, {}}});
                if (!r) {
                    ++errors;
                    continue;
                }
                if (r->outcome == Outcome::OutOfStock) {
                    ++outOfStock;
                    continue;
                }
                ++reserved;
                if (i % 2 == 0) {
                    auto p = mine->confirm(order, u"pay-"_s + order);
                    paid += p && p->outcome == Outcome::Paid;
                } else {
                    auto x = mine->release(order, u"cancel"_s);
                    errors += !(x && x->outcome == Outcome::Released);
                }
            }
        });
    }
    for (auto &t : threads)
        t.join();
    const BookWriters::Stats stats = writers.stats();
    writers.stop();
    qInfo("%lld orders in %lld transactions, the largest %d", stats.orders, stats.batches, stats.largest);
    QCOMPARE(errors.load(), 0);
    QCOMPARE(reserved.load() + outOfStock.load(), clients * each);
    const auto hot = FS_OK(engine->book().levels(u"HOT"_s));
    QCOMPARE(hot.sold, paid.load());
    QCOMPARE(hot.locked, 0);
    QCOMPARE(hot.available, stock - paid.load());
    QVERIFY(stats.batches < stats.orders);
    QVERIFY(test::bookHolds(*engine));
    // Stopped writers answer at once, never hang.
    auto late = writers.reserveAndWait(ReserveOrder{u"late"_s, {}, {{u"HOT"_s, 1, {}}}, 300, {}});
    QVERIFY(!late && late.error().code == ErrorCode::Unavailable);
}

void TestBookBatch::writersCheckpointTheWal()
{
    // SQLite: the writers' commits reach the database file itself (not only the WAL) by the
    // time they stop: their checkpointer copies the WAL there while they write, and once more
    // at the end. The file alone, without its WAL, holds every order.
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"W"_s, 100000));
    BookWriters writers(fresh.url(), Actor{u"tester"_s, u"test"_s}, 4);
    FS_VERIFY_OK(writers.start());
    const int clients = 8, each = 50;
    std::atomic<int> reserved{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c)
        threads.emplace_back([&, c] {
            for (int i = 0; i < each; ++i) {
                auto r = writers.reserveAndWait(
                    ReserveOrder{u"w-%1-%2"_s.arg(c).arg(i), {}, {{u"W"_s, 1, {}}}, 300, {}});
                reserved += r && r->outcome == Outcome::Reserved;
            }
        });
    for (auto &t : threads)
        t.join();
    writers.stop();
    QCOMPARE(reserved.load(), clients * each);
    // Checkpointed every kCommitsPerCheckpoint commits and once at the stop, not after
    // every commit: a hot SKU's pages are copied once for many batches.
    const BookWriters::Stats stats = writers.stats();
    qInfo("%lld transactions, %lld checkpoints", stats.batches, stats.checkpoints);
    QVERIFY(stats.checkpoints >= 1);
    QVERIFY2(stats.checkpoints <= stats.batches / BookWriters::kCommitsPerCheckpoint + 1,
             qPrintable(u"%1 checkpoints for %2 transactions"_s.arg(stats.checkpoints).arg(stats.batches)));

    const QString alone = fresh.url().path + u".alone"_s;
    QFile::remove(alone);
    QVERIFY(QFile::copy(fresh.url().path, alone));
    int inFile = -1;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, u"checkpointed-file"_s);
        db.setDatabaseName(alone);
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY2(q.exec(u"SELECT count(*) FROM orders WHERE order_id LIKE 'w-%'"_s), qPrintable(q.lastError().text()));
        QVERIFY(q.next());
        inFile = q.value(0).toInt();
    }
    QSqlDatabase::removeDatabase(u"checkpointed-file"_s);
    QCOMPARE(inFile, clients * each);
}

void TestBookBatch::existingOrdersUseTheIndex()
{
    // PostgreSQL: a batch's look-up of its orders that exist reads the primary key, not every
    // order of the book (given the ids as JSON it scanned them all: the hash join was the
    // backend's top cost in batched_row at 32 clients). Custom and generic plans alike.
    FS_FRESH_BOOK(fresh, u"postgresql"_s);
    auto db = Database::open(fresh.url());
    QVERIFY(db);
    FS_VERIFY_OK((*db)->exec(u"INSERT INTO orders (order_id, user_id, status, version, created_at, expires_at) "
                             u"SELECT 'o-' || g, NULL, 'PENDING', 1, 0, 0 FROM generate_series(1, 30000) AS g"_s));
    QStringList ids;
    for (int i = 0; i < 30; ++i)
        ids << u"o-%1"_s.arg(1 + i * 997);
    ids << u"o-none"_s;
    const QString literal = u'{' + ids.join(u',') + u'}';
    QCOMPARE(FS_OK((*db)->exec(sql::existingOrdersOf(Dialect::Postgres), {literal})).rows.size(), 30);

    // EXPLAIN cannot be prepared through QtSql: PREPARE and EXPLAIN EXECUTE by hand.
    QString statement = sql::existingOrdersOf(Dialect::Postgres);
    statement.replace(u"?"_s, u"$1"_s);
    for (const QString &mode : {u"force_custom_plan"_s, u"force_generic_plan"_s}) {
        QStringList plan;
        const QString error = execUnprepared(fresh.url(),
                                             {u"SET plan_cache_mode = "_s + mode,
                                              u"PREPARE fs_existing(text[]) AS "_s + statement,
                                              u"EXPLAIN EXECUTE fs_existing('%1')"_s.arg(literal)},
                                             &plan);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QString text = plan.join(u'\n');
        QVERIFY2(text.contains(u"orders_pkey"_s) && !text.contains(u"Seq Scan on orders"_s),
                 qPrintable(mode + u":\n"_s + text));
    }
}

void TestBookBatch::lookUpsArePlannedForTheBookAsItIs()
{
    // PostgreSQL: a batch's look-up of its existing orders is planned for the orders table as
    // it is at each run. By PostgreSQL's default a prepared statement's sixth run on may take
    // a generic plan cached once: made while the book was empty, it was a sequential scan of
    // every order, kept as the book grew (9-12 ms a batch at 18 000 orders in
    // scripts/bench-server.sh, auto_explain).
    FS_FRESH_BOOK(fresh, u"postgresql"_s);
    auto db = Database::open(fresh.url());
    QVERIFY(db);
    const QString lookUp = sql::existingOrdersOf(Dialect::Postgres);
    const QString ids = u"{o-1,o-7777,o-none}"_s; // as Book binds them (arrayLiteral)
    for (int i = 0; i < 8; ++i)
        QCOMPARE(FS_OK((*db)->exec(lookUp, {ids})).rows.size(), 0);
    FS_VERIFY_OK((*db)->exec(u"INSERT INTO orders (order_id, user_id, status, version, created_at, expires_at) "
                             u"SELECT 'o-' || g, NULL, 'PENDING', 1, 0, 0 FROM generate_series(1, 20000) AS g"_s));
    QCOMPARE(FS_OK((*db)->exec(lookUp, {ids})).rows.size(), 2);

    // QtSql prepares it (PREPARE name AS ...) with $1 for the ?; this session's statements only.
    QString prepared = lookUp;
    prepared.replace(u"?"_s, u"$1"_s);
    const SqlRows plans = FS_OK((*db)->exec(
        u"SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE right(statement, length(?)) = ?"_s,
        {prepared, prepared}));
    QCOMPARE(plans.rows.size(), 1);
    QCOMPARE(plans.first().at(0).toLongLong(), 0); // never the plan made on the empty table
    QCOMPARE(plans.first().at(1).toLongLong(), 9);
}

void TestBookBatch::actorsTravelWithTheirOrders()
{
    // A server's book writers commit the orders of many principals in one transaction: each
    // order, ledger row and refund names its own actor, in every form a reserve takes (the
    // grouped statements, PostgreSQL's one statement, the statements per order), and an
    // actor that reaches only its own orders neither sees nor moves another's.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    Book &book = engine->book();
    FS_VERIFY_OK(book.addSku(u"A"_s, 100, 1));
    FS_VERIFY_OK(book.addSku(u"B"_s, 100, 1));
    const Actor shopA{u"shop-a"_s, u"server@h1"_s, Actor::Reach::OwnOrders};
    const Actor shopB{u"shop-b"_s, u"server@h2"_s, Actor::Reach::OwnOrders};
    const Actor psp{u"psp"_s, u"server@h1"_s};
    // Grouped: g-a, g-b (one-line orders of new ids in one batch); per order: m-a (two
    // lines), l-b (a user limit); alone: s-a (PostgreSQL: one statement).
    const QList<ReserveOrder> batch{ReserveOrder{u"g-a"_s, {}, {{u"A"_s, 1, {}}}, 300, {}, shopA},
                                    ReserveOrder{u"g-b"_s, {}, {{u"A"_s, 1, {}}}, 300, {}, shopB},
                                    ReserveOrder{u"m-a"_s, {}, {{u"A"_s, 1, {}}, {u"B"_s, 1, {}}}, 300, {}, shopA},
                                    ReserveOrder{u"l-b"_s, u"u1"_s, {{u"B"_s, 1, {}}}, 300, {{u"B"_s, 5}}, shopB}};
    for (const auto &r : book.reserveBatch(batch))
        QVERIFY(r && r->outcome == Outcome::Reserved);
    QCOMPARE(FS_OK(book.reserveBatch({ReserveOrder{u"s-a"_s, {}, {{u"A"_s, 1, {}}}, 300, {}, shopA}}).constFirst())
                 .outcome,
             Outcome::Reserved);
    const QList<std::pair<QString, Actor>> creators{
        {u"g-a"_s, shopA}, {u"g-b"_s, shopB}, {u"m-a"_s, shopA}, {u"l-b"_s, shopB}, {u"s-a"_s, shopA}};
    for (const auto &[order, by] : creators) {
        QCOMPARE(FS_OK(book.order(order)).createdBy, by.operatorName);
        const QList<LedgerRow> rows = FS_OK(book.ledgerOfOrder(order));
        QVERIFY(!rows.isEmpty());
        for (const LedgerRow &row : rows) {
            QCOMPARE(row.operatorName, by.operatorName);
            QCOMPARE(row.source, by.source);
        }
    }

    // shop-b and shop-a's g-a: answered as an unknown order (word for word), nothing moves;
    // a reserve of it again is a duplicate that shows none of it.
    const SkuLevels before = FS_OK(book.levels(u"A"_s));
    const qint64 ledgerBefore = FS_OK(book.ledgerCount());
    const Result<OrderView> hidden = book.order(u"g-a"_s, shopB);
    const Result<OrderView> unknown = book.order(u"g-z"_s, shopB);
    QVERIFY(!hidden && !unknown);
    QCOMPARE(hidden.error().code, ErrorCode::NotFound);
    QCOMPARE(hidden.error().message, QString(unknown.error().message).replace(u"g-z"_s, u"g-a"_s));
    const auto refused = book.releaseBatch({FinishOrder{u"g-a"_s, u"cancel"_s, shopB}});
    QVERIFY(!refused.constFirst());
    QCOMPARE(refused.constFirst().error().message, hidden.error().message);
    const auto again = book.reserveBatch({ReserveOrder{u"g-a"_s, {}, {{u"A"_s, 1, {}}}, 300, {}, shopB}});
    QCOMPARE(FS_OK(again.constFirst()).outcome, Outcome::Duplicate);
    QVERIFY(again.constFirst()->lines.isEmpty());
    QCOMPARE(FS_OK(book.levels(u"A"_s)).locked, before.locked);
    QCOMPARE(FS_OK(book.levels(u"A"_s)).available, before.available);
    QCOMPARE(FS_OK(book.ledgerCount()), ledgerBefore);
    QCOMPARE(FS_OK(book.orderStatus(u"g-a"_s)), std::optional(OrderStatus::Pending));
    // Its creator sees it and reserves it again; an actor reaching every order sees it.
    QCOMPARE(FS_OK(book.order(u"g-a"_s, shopA)).createdBy, u"shop-a"_s);
    QCOMPARE(FS_OK(book.order(u"g-a"_s, psp)).createdBy, u"shop-a"_s);
    const auto repeat = book.reserveBatch({ReserveOrder{u"g-a"_s, {}, {{u"A"_s, 1, {}}}, 300, {}, shopA}});
    QCOMPARE(FS_OK(repeat.constFirst()).outcome, Outcome::Reserved);
    QCOMPARE(repeat.constFirst()->lines.size(), 1);

    // Confirm by the payment provider, release by the creator, a late payment's refund.
    const auto paid = book.confirmBatch({FinishOrder{u"g-a"_s, u"pay-1"_s, psp}});
    QCOMPARE(FS_OK(paid.constFirst()).outcome, Outcome::Paid);
    const auto released = book.releaseBatch({FinishOrder{u"g-b"_s, u"cancel"_s, shopB}});
    QCOMPARE(FS_OK(released.constFirst()).outcome, Outcome::Released);
    const auto late = book.confirmBatch({FinishOrder{u"g-b"_s, u"pay-2"_s, psp}});
    QCOMPARE(FS_OK(late.constFirst()).outcome, Outcome::RefundRequired);
    auto rowOf = [&](const QString &order, const QString &operation) {
        for (const LedgerRow &row : FS_OK(book.ledgerOfOrder(order)))
            if (row.operation == operation)
                return row;
        return LedgerRow{};
    };
    QCOMPARE(rowOf(u"g-a"_s, u"CONFIRM"_s).operatorName, u"psp"_s);
    QCOMPARE(rowOf(u"g-b"_s, u"RELEASE"_s).operatorName, u"shop-b"_s);
    QCOMPARE(rowOf(u"g-b"_s, u"RELEASE"_s).source, u"server@h2"_s);
    const QList<Refund> refunds = FS_OK(book.refunds(u"g-b"_s));
    QCOMPARE(refunds.size(), 1);
    QCOMPARE(refunds.first().payment, u"pay-2"_s);
    QCOMPARE(refunds.first().operatorName, u"psp"_s);
    QCOMPARE(refunds.first().source, u"server@h1"_s);

    // An order whose creator the book did not record (written before it did) is no one's.
    FS_VERIFY_OK(book.database().exec(u"UPDATE orders SET created_by = NULL WHERE order_id = 's-a'"_s));
    QVERIFY(!book.order(u"s-a"_s, shopA));
    QVERIFY(!book.releaseBatch({FinishOrder{u"s-a"_s, u"cancel"_s, shopA}}).constFirst());
    QVERIFY(book.order(u"s-a"_s, psp));

    // Expiry is the book's own actor's.
    const auto expired = FS_OK(book.expire(FS_OK(book.database().nowMs()) + 3'600'000));
    QCOMPARE(expired.size(), 3); // m-a, l-b, s-a
    QCOMPARE(rowOf(u"s-a"_s, u"RELEASE"_s).operatorName, book.actor().operatorName);
    QCOMPARE(rowOf(u"s-a"_s, u"RELEASE"_s).source, book.actor().source);
    QVERIFY(test::bookHolds(*engine));
}

QTEST_GUILESS_MAIN(TestBookBatch)
#include "tst_book_batch.moc"
