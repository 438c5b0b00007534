// Database: write transactions that lose a race are retried, never reported as success and
// never as a crash; migrations and the statement cache.

#include "reconcile/Reconciler.h"
#include "store/BookReplication.h"
#include "store/Database.h"
#include "store/SaleStore.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/TcpCut.h"
#include "support/TinyDisk.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTest>

#include <barrier>
#include <thread>

using namespace Qt::StringLiterals;
using namespace flashstock;

class TestDatabase : public QObject {
    Q_OBJECT

private slots:
    void deadlockIsRetried();
    void failingBodyRollsBack_data() { test::addBackendRows(); }
    void failingBodyRollsBack();
    void manyDistinctStatementsStayBounded();
    void migrationKeepsSales();
    void migrationTypesCorrections_data() { test::addBackendRows(); }
    void migrationTypesCorrections();
    void openDoesNotWaitForTheWriteLock_data() { test::addBackendRows(); }
    void openDoesNotWaitForTheWriteLock();
    void nowIsOneInstantPerStatement_data() { test::addBackendRows(); }
    void nowIsOneInstantPerStatement();
    void bookUrls_data();
    void bookUrls();
    void badBookUrls_data();
    void badBookUrls();
    void lostServerIsReopenedOnTheNextCall();
    void standbysAskedFor_data();
    void standbysAskedFor();
    void replicationStates();
    void replicationOfTheBook();
    void lostCommitIsOutcomeUnknownThenReopened();
    void fullDiskRefusesTheCommit();
};

void TestDatabase::fullDiskRefusesTheCommit()
{
    // A SQLite book whose disk is full: the COMMIT SQLite refuses did not happen, so the
    // write fails (unavailable, the book is full), never "outcome unknown"; nothing of it is
    // in the book, and once there is room the same write goes through.
    FS_TINY_DISK(disk, 1024);
    const DbUrl url = FS_OK(DbUrl::parse(u"sqlite:///"_s + disk.path() + u"/book.db"_s));
    auto engine = test::openEngine(url);
    QVERIFY(engine);
    Book &book = engine->book();
    FS_VERIFY_OK(book.addSku(u"A"_s, 100000, 1));
    QVERIFY(disk.fill());
    // The WAL may hold a few more commits in room it already has: write until one is refused.
    Result<ReserveResult> r = fail(ErrorCode::Internal, u"not run"_s);
    QString order;
    for (int i = 0; i < 100000; ++i) {
        order = u"o%1"_s.arg(i);
        r = book.reserve(order, {}, {{u"A"_s, 1, {}}}, 300);
        if (!r)
            break;
    }
    QVERIFY2(!r, "the book never ran out of disk");
    QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::Unavailable));
    QVERIFY2(r.error().message.contains(u"full"_s), qPrintable(r.error().message));
    QCOMPARE(FS_OK(book.orderStatus(order)), std::nullopt);

    QVERIFY(disk.makeRoom());
    auto again = book.reserve(order, {}, {{u"A"_s, 1, {}}}, 300);
    FS_VERIFY_OK(again);
    QCOMPARE(again->outcome, Outcome::Reserved);
    QVERIFY(test::bookHolds(*engine));
}

void TestDatabase::deadlockIsRetried()
{
    // Two transactions lock the same two rows in opposite orders: PostgreSQL aborts one
    // with 40P01. The loser must be retried and commit; neither may report a false success.
    FS_FRESH_BOOK(fresh, u"postgresql"_s);
    {
        auto engine = test::openEngine(fresh.url());
        QVERIFY(engine);
        FS_VERIFY_OK(engine->addSku(u"A"_s, 100));
        FS_VERIFY_OK(engine->addSku(u"B"_s, 100));
    }
    std::barrier bothLocked(2);
    std::atomic<int> attempts{0};
    Result<int> results[2] = {fail(ErrorCode::Internal, u"not run"_s), fail(ErrorCode::Internal, u"not run"_s)};
    auto run = [&](int which) {
        auto db = Database::open(fresh.url());
        if (!db)
            return;
        const QString first = which == 0 ? u"A"_s : u"B"_s, second = which == 0 ? u"B"_s : u"A"_s;
        const QString bump = u"UPDATE buckets SET available = available - 1, total = total - 1 WHERE sku = ?"_s;
        results[which] = (*db)->write<int>([&](Transaction &tx) -> Result<int> {
            ++attempts;
            if (auto r = (*db)->exec(bump, {first}); !r)
                return std::unexpected(r.error());
            if (tx.attempt() == 1)
                bothLocked.arrive_and_wait(); // only the first attempts meet: then they cross
            if (auto r = (*db)->exec(bump, {second}); !r)
                return std::unexpected(r.error());
            return tx.attempt();
        });
    };
    std::thread a(run, 0), b(run, 1);
    a.join();
    b.join();
    QVERIFY2(results[0].has_value(), qPrintable(results[0] ? QString() : results[0].error().message));
    QVERIFY2(results[1].has_value(), qPrintable(results[1] ? QString() : results[1].error().message));
    QVERIFY2(*results[0] > 1 || *results[1] > 1, "no transaction was retried: the deadlock did not happen");
    auto engine = test::openEngine(fresh.url());
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 98);
    QCOMPARE(FS_OK(engine->book().levels(u"B"_s)).available, 98);
    qInfo("attempts in all: %d", attempts.load());
}

void TestDatabase::failingBodyRollsBack()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    Database &db = engine->database();
    auto r = db.write<int>([&](Transaction &) -> Result<int> {
        if (auto u = db.exec(u"UPDATE buckets SET available = 0, total = 0 WHERE sku = 'A'"_s); !u)
            return std::unexpected(u.error());
        return fail(ErrorCode::Internal, u"the body gave up"_s);
    });
    QVERIFY(!r);
    QCOMPARE(r.error().message, u"the body gave up"_s);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 10);
}

void TestDatabase::manyDistinctStatementsStayBounded()
{
    // A loop whose statements carry a varying literal (the reconciler's window) must not
    // grow the prepared-statement cache without end; results stay right across a reset.
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    auto db = Database::open(fresh.url());
    FS_VERIFY_OK(db);
    for (int i = 0; i < Database::kMaxCachedStatements * 3; ++i) {
        auto r = (*db)->exec(u"SELECT %1"_s.arg(i));
        FS_VERIFY_OK(r);
        QCOMPARE(r->first().at(0).toInt(), i);
        QVERIFY((*db)->cachedStatements() <= Database::kMaxCachedStatements);
    }
}

void TestDatabase::migrationKeepsSales()
{
    // Schema 4 rebuilds the sales table on SQLite (a CHECK cannot change in place): a book
    // of schema 3 with a sale keeps it, and the new status works. (PostgreSQL alters the
    // constraint in place; every fresh PostgreSQL book in the other tests runs it.)
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    qint64 saleId = 0;
    {
        auto engine = test::openEngine(fresh.url());
        QVERIFY(engine);
        FS_VERIFY_OK(engine->addSku(u"A"_s, 5));
        auto sale = engine->createSale(u"A"_s, 0, 0, 120, 2);
        FS_VERIFY_OK(sale);
        saleId = sale->id;
        FS_VERIFY_OK(engine->setSaleStatus(saleId, SaleStatus::Open));
        FS_VERIFY_OK(engine->book().reserve(u"old-1"_s, u"u1"_s, {{u"A"_s, 1, {}}}, 120));
        // Back to schema 3, as a book written by an earlier release would be.
        for (const QString &column : {u"discrepancies DROP COLUMN alerted_at"_s,
                                      u"discrepancies DROP COLUMN alert_claimed_at"_s,
                                      u"discrepancies DROP COLUMN status_from"_s, u"discrepancies DROP COLUMN status_to"_s,
                                      u"discrepancies DROP COLUMN payment_ref"_s, u"discrepancies DROP COLUMN breaks"_s,
                                      u"discrepancies DROP COLUMN level"_s,
                                      u"reconcile_checkpoints DROP COLUMN other_locked"_s,
                                      u"reconcile_checkpoints DROP COLUMN other_sold"_s,
                                      u"adjustments DROP COLUMN discrepancy_id"_s, u"orders DROP COLUMN created_by"_s,
                                      u"refunds DROP COLUMN operator"_s, u"refunds DROP COLUMN source"_s})
            FS_VERIFY_OK(engine->database().exec(u"ALTER TABLE "_s + column));
        FS_VERIFY_OK(engine->database().exec(u"DROP INDEX discrepancies_key"_s));
        FS_VERIFY_OK(engine->database().exec(u"DROP TABLE order_fences"_s));
        FS_VERIFY_OK(engine->database().exec(u"DROP INDEX orders_gate_release_due"_s));
        FS_VERIFY_OK(engine->database().exec(u"ALTER TABLE orders DROP COLUMN gate_release_due"_s));
        FS_VERIFY_OK(engine->database().exec(u"DROP TABLE access_tokens"_s));
        FS_VERIFY_OK(engine->database().exec(u"DROP TABLE expirer_heartbeats"_s));
        for (const QString &table : {u"approvers"_s, u"approval_policy"_s, u"discrepancy_decisions"_s})
            FS_VERIFY_OK(engine->database().exec(u"DROP TABLE "_s + table));
        auto undo = engine->database().exec(u"UPDATE meta SET value = '3' WHERE key = 'schema_version'"_s);
        FS_VERIFY_OK(undo);
    }
    auto engine = test::openEngine(fresh.url()); // migrates 3 -> the latest again, rebuilding the sales table
    QVERIFY(engine);
    auto sale = engine->sales().get(saleId);
    FS_VERIFY_OK(sale);
    QCOMPARE(sale->status, SaleStatus::Open);
    QCOMPARE(sale->holdSeconds, 120);
    QCOMPARE(sale->perUserLimit, 2);
    QCOMPARE(FS_OK(engine->setSaleStatus(saleId, SaleStatus::Paused)).status, SaleStatus::Paused);
    auto version = engine->database().exec(u"SELECT value FROM meta WHERE key = 'schema_version'"_s);
    FS_VERIFY_OK(version);
    QCOMPARE(version->first().at(0).toInt(), Database::schemaVersion());
    FS_VERIFY_OK(engine->database().exec(u"SELECT alerted_at FROM discrepancies"_s));
    // An order written before schema 13 has no recorded creator: no storefront's token reaches it.
    QCOMPARE(FS_OK(engine->book().order(u"old-1"_s)).createdBy, QString());
    QVERIFY(!engine->book().order(u"old-1"_s, Actor{u"shop"_s, u"server@h"_s, Actor::Reach::OwnOrders}));
}

void TestDatabase::migrationTypesCorrections()
{
    // Schema 6 stores a correction as values: the text of earlier releases
    // (`order_status:FROM->TO`, `refund:PAYMENT`) is taken apart by the migration, so a
    // discrepancy found before the upgrade is approved as it was proposed.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    qint64 statusId = 0, refundId = 0;
    {
        auto engine = test::openEngine(fresh.url());
        QVERIFY(engine);
        FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
        FS_VERIFY_OK(engine->reserve(u"o1"_s, {}, {{u"A"_s, 2, {}}}));
        FS_VERIFY_OK(engine->reserve(u"o2"_s, {}, {{u"A"_s, 1, {}}}));
        FS_VERIFY_OK(engine->release(u"o2"_s, u"cancel"_s));
        FS_VERIFY_OK(engine->database().exec(u"UPDATE orders SET status = 'PAID' WHERE order_id = 'o1'"_s));
        FS_VERIFY_OK(engine->database().exec(u"UPDATE orders SET payment_ref = 'pay9' WHERE order_id = 'o2'"_s));
        Reconciler rec(*engine);
        auto pass = rec.runPass(0);
        FS_VERIFY_OK(pass);
        for (const Discrepancy &d : pass->discrepancies) {
            if (d.kind == DiscrepancyKind::OrderLedgerMismatch)
                statusId = d.id;
            if (d.kind == DiscrepancyKind::UnrefundedPayment)
                refundId = d.id;
        }
        QVERIFY(statusId > 0 && refundId > 0);
    }
    {
        // Back to schema 5: the corrections as text, the new columns and tables gone. By hand, on a
        // connection of its own: PostgreSQL cannot prepare DDL, and Database prepares all.
        QSqlDatabase db = backend == u"sqlite"_s ? QSqlDatabase::addDatabase(u"QSQLITE"_s, u"schema5"_s)
                                                 : addPostgresConnection(fresh.url(), u"schema5"_s);
        if (backend == u"sqlite"_s)
            db.setDatabaseName(fresh.url().path);
        QVERIFY2(db.open(), qPrintable(db.lastError().text()));
        QSqlQuery q(db);
        QStringList statements{
            u"UPDATE discrepancies SET correction = 'order_status:PAID->PENDING' WHERE id = %1"_s.arg(statusId),
            u"UPDATE discrepancies SET correction = 'refund:pay9' WHERE id = %1"_s.arg(refundId),
            u"ALTER TABLE discrepancies DROP COLUMN status_from"_s,
            u"ALTER TABLE discrepancies DROP COLUMN status_to"_s,
            u"ALTER TABLE discrepancies DROP COLUMN payment_ref"_s,
            u"ALTER TABLE discrepancies DROP COLUMN breaks"_s,
            u"ALTER TABLE discrepancies DROP COLUMN found_total"_s,
            u"ALTER TABLE discrepancies DROP COLUMN orders_locked"_s,
            u"ALTER TABLE discrepancies DROP COLUMN orders_sold"_s,
            u"ALTER TABLE discrepancies DROP COLUMN set_available"_s,
            u"ALTER TABLE discrepancies DROP COLUMN set_locked"_s,
            u"ALTER TABLE discrepancies DROP COLUMN set_sold"_s,
            u"ALTER TABLE discrepancies DROP COLUMN level"_s,
            u"ALTER TABLE reconcile_checkpoints DROP COLUMN other_locked"_s,
            u"ALTER TABLE reconcile_checkpoints DROP COLUMN other_sold"_s,
            u"ALTER TABLE adjustments DROP COLUMN discrepancy_id"_s,
            u"DROP INDEX discrepancies_key"_s,
            u"DROP TABLE order_fences"_s,
            u"DROP INDEX orders_gate_release_due"_s,
            u"ALTER TABLE orders DROP COLUMN gate_release_due"_s,
            u"DROP TABLE access_tokens"_s,
            u"DROP TABLE expirer_heartbeats"_s,
            u"DROP TABLE approvers"_s,
            u"DROP TABLE approval_policy"_s,
            u"DROP TABLE discrepancy_decisions"_s,
            u"ALTER TABLE orders DROP COLUMN created_by"_s,
            u"ALTER TABLE refunds DROP COLUMN operator"_s,
            u"ALTER TABLE refunds DROP COLUMN source"_s,
            u"UPDATE meta SET value = '5' WHERE key = 'schema_version'"_s};
        if (backend != u"sqlite"_s) // schema 5 kept every key once
            statements << u"ALTER TABLE discrepancies ADD CONSTRAINT discrepancies_dkey_key UNIQUE (dkey)"_s;
        for (const QString &statement : statements)
            QVERIFY2(q.exec(statement), qPrintable(q.lastError().text()));
        q.finish();
        db.close();
    }
    QSqlDatabase::removeDatabase(u"schema5"_s);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    Reconciler rec(*engine);
    auto status = rec.get(statusId);
    FS_VERIFY_OK(status);
    QCOMPARE(status->correction, Correction(ChangeOrderStatus{OrderStatus::Paid, OrderStatus::Pending}));
    auto refund = rec.get(refundId);
    FS_VERIFY_OK(refund);
    QCOMPARE(refund->correction, Correction(RecordRefund{u"pay9"_s}));
    const QStringList approvers{u"tester"_s};
    FS_VERIFY_OK(test::approveAsShown(rec, statusId, test::by(u"tester"_s), u"no payment arrived"_s, approvers));
    FS_VERIFY_OK(test::approveAsShown(rec, refundId, test::by(u"tester"_s), u"refund it"_s, approvers));
    QCOMPARE(FS_OK(engine->book().orderStatus(u"o1"_s)), std::optional(OrderStatus::Pending));
    QCOMPARE(FS_OK(engine->book().refundCount(u"o2"_s)), 1);
    QVERIFY(test::bookHolds(*engine));
}

void TestDatabase::openDoesNotWaitForTheWriteLock()
{
    // A writer holds the book's write lock (SQLite: BEGIN IMMEDIATE on another connection;
    // PostgreSQL: the migration's advisory lock, held by another session). Opening the book
    // of the current schema and reading it must not wait for it: the version is read, and
    // the lock is taken only to migrate.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    {
        auto engine = test::openEngine(fresh.url());
        QVERIFY(engine);
        FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    }
    const bool sqlite = backend == u"sqlite"_s;
    bool inTime = false, shown = false;
    Result<qint64> available = fail(ErrorCode::Internal, u"not run"_s);
    QProcess show;
    {
        QSqlDatabase writer = sqlite ? QSqlDatabase::addDatabase(u"QSQLITE"_s, u"writer"_s)
                                     : addPostgresConnection(fresh.url(), u"writer"_s);
        if (sqlite)
            writer.setDatabaseName(fresh.url().path);
        QSqlQuery q(writer);
        const QStringList lock = sqlite ? QStringList{u"BEGIN IMMEDIATE"_s,
                                                      u"UPDATE buckets SET available = available WHERE sku = 'A'"_s}
                                        : QStringList{u"SELECT pg_advisory_lock(7305001)"_s};
        bool locked = writer.open();
        for (const QString &statement : lock)
            locked = locked && q.exec(statement);
        if (locked) {
            // The reader on a thread of its own (one connection per thread); the lock stays
            // held until it is done or has clearly been waiting (SQLite's busy timeout is 10 s).
            std::atomic<bool> done{false};
            std::thread reader([&] {
                if (auto engine = test::openEngine(fresh.url()))
                    if (auto levels = engine->book().levels(u"A"_s))
                        available = levels->available;
                done = true;
            });
            inTime = QTest::qWaitFor([&] { return done.load(); }, 5000);
            // And the real CLI, as an operator would look while a writer works.
            show.start(QStringLiteral(FLASHSTOCK_CLI_PATH),
                       {u"sku"_s, u"show"_s, u"A"_s, u"--db"_s, fresh.urlText(), u"--redis"_s, u"none"_s, u"--json"_s});
            shown = show.waitForFinished(5000);
            q.exec(sqlite ? u"ROLLBACK"_s : u"SELECT pg_advisory_unlock(7305001)"_s);
            reader.join();
            if (!shown) {
                show.kill();
                show.waitForFinished(5000);
            }
        }
        QVERIFY2(locked, qPrintable(q.lastError().text() + writer.lastError().text()));
        q.finish();
        writer.close();
    }
    QSqlDatabase::removeDatabase(u"writer"_s);
    QVERIFY2(inTime, "opening the book waited for the write lock");
    QCOMPARE(FS_OK(available), 10);
    QVERIFY2(shown, "sku show waited for the write lock");
    QCOMPARE(show.exitCode(), 0);
    QCOMPARE(QJsonDocument::fromJson(show.readAllStandardOutput()).object()[u"book"_s][u"available"_s].toInt(), 10);
}

void TestDatabase::standbysAskedFor_data()
{
    QTest::addColumn<QString>("names");
    QTest::addColumn<int>("asked");
    QTest::newRow("none") << QString() << 0;
    QTest::newRow("pg_auto_failover") << u"ANY 1 (pgautofailover_standby_2, pgautofailover_standby_3)"_s << 1;
    QTest::newRow("first") << u"FIRST 2 (a, b, c)"_s << 2;
    QTest::newRow("counted") << u" 2 (a, b)"_s << 2;
    QTest::newRow("lower case") << u"any 2(a, b, c)"_s << 2;
    QTest::newRow("a list") << u"a, b"_s << 1;
    QTest::newRow("any standby") << u"*"_s << 1;
}

void TestDatabase::standbysAskedFor()
{
    QFETCH(QString, names);
    QFETCH(int, asked);
    QCOMPARE(synchronousStandbysAskedFor(names), asked);
}

void TestDatabase::replicationStates()
{
    // What the primary reports, and the state it makes: three nodes, one standby asked for.
    BookReplication r;
    r.nodes = 3;
    r.standbysRequired = 1;
    r.standbys = 2;
    r.synchronousStandbys = 1;
    QCOMPARE(r.state(), BookReplication::State::Synchronous);
    QVERIFY(r.synchronous() && !r.warns());
    r.synchronousStandbys = 0; // connected but none streaming as synchronous: commits wait
    QCOMPARE(r.state(), BookReplication::State::CommitsWaiting);
    QVERIFY(!r.synchronous() && r.warns());
    r.synchronousStandbys = -1; // the role may not read their states
    QCOMPARE(r.state(), BookReplication::State::Unknown);
    QVERIFY(!r.synchronous() && !r.warns());
    r.synchronousStandbys = 1;
    r.commitsWait = false; // synchronous_commit local or off: the standby is not waited for
    QCOMPARE(r.state(), BookReplication::State::WritingAlone);
    r.commitsWait = true;
    r.standbysRequired = 0; // pg_auto_failover's wait_primary: no standby asked for
    QCOMPARE(r.state(), BookReplication::State::WritingAlone);
    QVERIFY(r.warns());
    QVERIFY2(r.describe().contains(u"WRITING ALONE"_s), qPrintable(r.describe()));
    r.nodes = 1;
    r.standbys = 0;
    r.synchronousStandbys = 0;
    QCOMPARE(r.state(), BookReplication::State::Single); // one server, nothing asked for: a plain book
    QVERIFY(!r.warns());
    QCOMPARE(BookReplication::states().size(), 5);
}

void TestDatabase::replicationOfTheBook()
{
    // SQLite has none.
    {
        FS_FRESH_BOOK(lite, u"sqlite"_s);
        auto db = Database::open(lite.url());
        FS_VERIFY_OK(db);
        QVERIFY(!FS_OK(readBookReplication(**db)).has_value());
    }
    // The test's PostgreSQL alone: one server, no standby.
    FS_FRESH_BOOK(fresh, u"postgresql"_s);
    const DbHost server = fresh.url().hosts.constFirst();
    {
        auto db = Database::open(fresh.url());
        FS_VERIFY_OK(db);
        const auto r = FS_OK(readBookReplication(**db));
        QVERIFY(r.has_value());
        QCOMPARE(r->state(), BookReplication::State::Single);
        QCOMPARE(r->primaryNode, 1);
        QCOMPARE(r->nodes, 1);
        QCOMPARE(r->primary, u"%1:%2"_s.arg(server.host).arg(server.port));
    }
    // Named second after a server that is down: the session is on node 2 of 2, a replicated
    // book whose primary has no standby, so every commit is its only copy.
    const DbUrl two = FS_OK(DbUrl::parse(u"postgresql://%1@127.0.0.1:%2,%3:%4/%5?connect_timeout=2"_s
                                             .arg(fresh.url().user)
                                             .arg(test::deadPort())
                                             .arg(server.host)
                                             .arg(server.port)
                                             .arg(fresh.url().database),
                                         fresh.url().password));
    auto db = Database::open(two);
    FS_VERIFY_OK(db);
    const auto r = FS_OK(readBookReplication(**db));
    QVERIFY(r.has_value());
    QCOMPARE(r->primaryNode, 2);
    QCOMPARE(r->nodes, 2);
    QCOMPARE(r->state(), BookReplication::State::WritingAlone);
    QCOMPARE(r->stateName(), u"writing_alone"_s);
}

QTEST_GUILESS_MAIN(TestDatabase)
#include "tst_database.moc"
#include "support/TestChecks.h"

void TestDatabase::nowIsOneInstantPerStatement()
{
    // A statement that reads the clock, works a while and reads it again sees one instant
    // (an order's expires_at - created_at is its hold to the ms); the next statement a later one.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    Database &db = engine->database();
    const QString now = db.nowMsExpr();
    const QString work = db.dialect() == Dialect::Postgres
        ? u"(SELECT count(*) FROM (SELECT pg_sleep(0.02)) AS s)"_s
        : u"(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) SELECT count(*) FROM n)"_s;
    const auto rows = FS_OK(db.exec(u"SELECT %1, %2, %1"_s.arg(now, work)));
    const qint64 first = rows.first().at(0).toLongLong(), last = rows.first().at(2).toLongLong();
    QCOMPARE(last, first);
    QTest::qWait(5);
    QVERIFY(FS_OK(db.nowMs()) > first);
}

void TestDatabase::bookUrls_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("hosts");
    QTest::addColumn<QString>("ports");
    QTest::addColumn<QString>("parameters"); // name=value, joined by &
    QTest::addColumn<QString>("display");
    QTest::newRow("one host") << u"postgresql://fs:pw@db.example:5433/book"_s << u"db.example"_s << u"5433"_s << QString()
                              << u"postgresql://fs@db.example:5433/book"_s;
    QTest::newRow("default port") << u"postgres://fs@10.0.0.1/book"_s << u"10.0.0.1"_s << u"5432"_s << QString()
                                  << u"postgresql://fs@10.0.0.1:5432/book"_s;
    QTest::newRow("three hosts: read-write by default")
        << u"postgresql://fs@h1:5432,h2:5433,h3/book"_s << u"h1,h2,h3"_s << u"5432,5433,5432"_s
        << u"target_session_attrs=read-write"_s << u"postgresql://fs@h1:5432,h2:5433,h3:5432/book?target_session_attrs=read-write"_s;
    QTest::newRow("IPv6 and parameters passed through")
        << u"postgresql://fs@[::1]:6000,127.0.0.1:6001/book?target_session_attrs=primary&sslmode=require&connect_timeout=2"_s
        << u"::1,127.0.0.1"_s << u"6000,6001"_s << u"target_session_attrs=primary&sslmode=require&connect_timeout=2"_s
        << u"postgresql://fs@[::1]:6000,127.0.0.1:6001/book?target_session_attrs=primary&sslmode=require&connect_timeout=2"_s;
    QTest::newRow("percent-encoded options")
        << u"postgresql://fs@h/book?options=-c%20statement_timeout%3D5000"_s << u"h"_s << u"5432"_s
        << u"options=-c statement_timeout=5000"_s << u"postgresql://fs@h:5432/book?options=-c%20statement_timeout%3D5000"_s;
}

void TestDatabase::bookUrls()
{
    QFETCH(QString, text);
    QFETCH(QString, hosts);
    QFETCH(QString, ports);
    QFETCH(QString, parameters);
    QFETCH(QString, display);
    const DbUrl url = FS_OK(DbUrl::parse(text, u"from-file"_s));
    QCOMPARE(url.dialect, Dialect::Postgres);
    QCOMPARE(url.hostList(), hosts);
    QCOMPARE(url.portList(), ports);
    QStringList pairs;
    for (const auto &[name, value] : url.parameters)
        pairs << name + u'=' + value;
    QCOMPARE(pairs.join(u'&'), parameters);
    QCOMPARE(url.user, u"fs"_s);
    QCOMPARE(url.database, u"book"_s);
    QCOMPARE(url.password, text.contains(u":pw@"_s) ? u"pw"_s : u"from-file"_s);
    QCOMPARE(url.display(), display);
    // What display() prints parses back to the same servers and parameters.
    const DbUrl again = FS_OK(DbUrl::parse(url.display(), u"from-file"_s));
    QCOMPARE(again.hosts, url.hosts);
    QCOMPARE(again.parameters, url.parameters);
}

void TestDatabase::badBookUrls_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty host in a list") << u"postgresql://fs:s3cret@h1:5432,,h3/book"_s << u"no host"_s;
    QTest::newRow("bad port in a list") << u"postgresql://fs:s3cret@h1:5432,h2:99999/book"_s << u"bad port"_s;
    QTest::newRow("unknown parameter") << u"postgresql://fs:s3cret@h1/book?colour=red"_s << u"unknown parameter 'colour'"_s;
    QTest::newRow("password in the query") << u"postgresql://fs@h1/book?password=s3cret"_s << u"a password goes before"_s;
    QTest::newRow("a standby is no book") << u"postgresql://fs:s3cret@h1,h2/book?target_session_attrs=read-only"_s
                                          << u"target_session_attrs must be read-write or primary"_s;
    QTest::newRow("parameter twice") << u"postgresql://fs:s3cret@h1/book?sslmode=require&sslmode=disable"_s
                                     << u"sslmode appears twice"_s;
    QTest::newRow("semicolon in a value") << u"postgresql://fs:s3cret@h1/book?application_name=a;b"_s
                                          << u"';'"_s;
    QTest::newRow("connect_timeout not a number") << u"postgresql://fs:s3cret@h1/book?connect_timeout=soon"_s
                                                  << u"connect_timeout must be a whole number"_s;
    QTest::newRow("IPv6 unclosed") << u"postgresql://fs:s3cret@[::1/book"_s << u"closing ]"_s;
    QTest::newRow("no database") << u"postgresql://fs:s3cret@h1,h2"_s << u"no database name"_s;
    QTest::newRow("fragment") << u"postgresql://fs:s3cret@h1/book#x"_s << u"fragment"_s;
}

void TestDatabase::badBookUrls()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    const auto url = DbUrl::parse(text);
    QVERIFY(!url);
    QCOMPARE(url.error().code, ErrorCode::InvalidArgument);
    QCOMPARE(url.error().field, u"db"_s);
    QVERIFY2(url.error().message.contains(reason), qPrintable(url.error().message));
    QVERIFY2(!url.error().message.contains(u"s3cret"_s), qPrintable(url.error().message));
}

namespace {

/// The test server's book through `relay`, named second after a server that is down: libpq
/// must skip the dead one, as it does a failed primary in a formation's URL.
DbUrl throughRelay(const test::FreshBook &fresh, const test::TcpCut &relay)
{
    const QString text = u"postgresql://%1@127.0.0.1:%2,127.0.0.1:%3/%4?connect_timeout=2"_s.arg(fresh.url().user)
                             .arg(test::deadPort())
                             .arg(relay.port())
                             .arg(fresh.url().database);
    return DbUrl::parse(text, fresh.url().password).value();
}

} // namespace

void TestDatabase::lostServerIsReopenedOnTheNextCall()
{
    // A session whose server went away without a word (a lost machine: the connection reset)
    // fails its next call as Unavailable, never as a SQL error, and the call after that
    // works on a new session; the same for a write transaction.
    FS_FRESH_BOOK(fresh, u"postgresql"_s);
    const DbHost server = fresh.url().hosts.constFirst();
    test::TcpCut relay(server.host, server.port);
    QVERIFY(relay.start());
    auto db = Database::open(throughRelay(fresh, relay));
    FS_VERIFY_OK(db);
    const QString count = u"SELECT count(*) FROM meta WHERE key = ?"_s;
    QCOMPARE(FS_OK((*db)->exec(count, {u"application"_s})).first().at(0).toInt(), 1);

    QVERIFY(relay.cut() >= 1);
    const auto lost = (*db)->exec(count, {u"application"_s});
    QVERIFY(!lost);
    QVERIFY2(lost.error().code == ErrorCode::Unavailable, qPrintable(lost.error().message));
    QCOMPARE(FS_OK((*db)->exec(count, {u"application"_s})).first().at(0).toInt(), 1);

    // A statement the session has not prepared yet: the loss shows at its PREPARE.
    QVERIFY(relay.cut() >= 1);
    const QString fresher = u"SELECT count(*) FROM meta WHERE key <> ?"_s;
    const auto lostAtPrepare = (*db)->exec(fresher, {u"application"_s});
    QVERIFY(!lostAtPrepare);
    QVERIFY2(lostAtPrepare.error().code == ErrorCode::Unavailable, qPrintable(lostAtPrepare.error().message));
    QVERIFY(FS_OK((*db)->exec(fresher, {u"application"_s})).first().at(0).toInt() >= 1);

    QVERIFY(relay.cut() >= 1);
    const QString put = u"INSERT INTO meta (key, value) VALUES (?, ?)"_s;
    const auto write = (*db)->write<int>([&](Transaction &) -> Result<int> {
        auto r = (*db)->exec(put, {u"relay-1"_s, u"x"_s});
        return r ? Result<int>(r->affected) : std::unexpected(r.error());
    });
    QVERIFY(!write);
    QVERIFY2(write.error().code == ErrorCode::Unavailable, qPrintable(write.error().message));
    const auto again = (*db)->write<int>([&](Transaction &) -> Result<int> {
        auto r = (*db)->exec(put, {u"relay-2"_s, u"x"_s});
        return r ? Result<int>(r->affected) : std::unexpected(r.error());
    });
    QCOMPARE(FS_OK(again), 1);
    QCOMPARE(FS_OK((*db)->exec(u"SELECT key FROM meta WHERE key LIKE 'relay-%' ORDER BY key"_s)).rows.size(), 1);
    QVERIFY(relay.accepted() >= 3);
}

namespace {

/// Cuts the relay just before COMMIT is sent (once): the COMMIT goes to a dead connection.
class CutAtCommit final : public WriteFaults {
public:
    explicit CutAtCommit(test::TcpCut &relay) : m_relay(relay) {}
    bool failBeforeCommit() override { return false; }
    void beforeCommit() override
    {
        if (!m_done.exchange(true))
            m_relay.cut();
    }

private:
    test::TcpCut &m_relay;
    std::atomic<bool> m_done{false};
};

} // namespace

void TestDatabase::lostCommitIsOutcomeUnknownThenReopened()
{
    // The connection is lost with the COMMIT: the caller hears OutcomeUnknown (it may or may
    // not have committed), never success or a plain failure; the next call reopens.
    FS_FRESH_BOOK(fresh, u"postgresql"_s);
    const DbHost server = fresh.url().hosts.constFirst();
    test::TcpCut relay(server.host, server.port);
    QVERIFY(relay.start());
    auto db = Database::open(throughRelay(fresh, relay));
    FS_VERIFY_OK(db);
    CutAtCommit cut(relay);
    (*db)->setWriteFaults(&cut);
    const auto write = (*db)->write<int>([&](Transaction &) -> Result<int> {
        auto r = (*db)->exec(u"INSERT INTO meta (key, value) VALUES ('relay-commit', 'x')"_s);
        return r ? Result<int>(r->affected) : std::unexpected(r.error());
    });
    QVERIFY(!write);
    QVERIFY2(write.error().code == ErrorCode::OutcomeUnknown, qPrintable(write.error().message));
    // The cut came before the COMMIT left: the server never saw it.
    QCOMPARE(FS_OK((*db)->exec(u"SELECT count(*) FROM meta WHERE key = 'relay-commit'"_s)).first().at(0).toInt(), 0);
}
