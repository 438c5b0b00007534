// The reconciler: each discrepancy kind built directly in the book (SQL) or the gate (Redis),
// one pass, exactly that kind with its delta and action, and nothing new on a second pass.
// Real redis-server (RedisFixture) and both book backends.

#include "Engine.h"
#include "Identifiers.h"
#include "drill/Drill.h"
#include "gate/Gate.h"
#include "gate/GateKeys.h"
#include "gate/RedisConnection.h"
#include "reconcile/Reconciler.h"
#include "store/ApproverStore.h"
#include "store/BookSql.h"
#include "store/Database.h"
#include "store/Invariants.h"
#include "store/LedgerWindow.h"
#include "store/ReconcilePassStore.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"
#include "UnknownOutcomes.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSysInfo>
#include <QTest>
#include <QThread>

#include <barrier>
#include <thread>
#include <vector>

#include <pwd.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

const QStringList kApprovers{u"alice"_s};

/// One pass that must succeed; also checks that a second pass finds nothing new.
ReconcileReport passTwice(Reconciler &r, qint64 graceMs = 0)
{
    auto first = r.runPass(graceMs);
    if (!first)
        qFatal("pass failed: %s", qPrintable(first.error().message));
    for (const QString &w : first->warnings)
        qWarning("pass warning: %s", qPrintable(w));
    for (const Discrepancy &d : first->discrepancies)
        qWarning("found: %s %s delta %lld: %s", qPrintable(discrepancyKindName(d.kind)), qPrintable(d.sku), d.delta,
                 qPrintable(d.detail));
    auto second = r.runPass(graceMs);
    if (!second || !second->discrepancies.isEmpty())
        qFatal("second pass found something new");
    return *first;
}

/// A book where every kind of row the invariants read exists: `<p>1` PENDING (2 units),
/// `<p>2` released and then paid late (a refund), `<p>3` PAID.
bool trade(Engine &engine, const QString &p)
{
    return engine.reserve(p + u"1"_s, {}, {{u"A"_s, 2, {}}}).has_value()
        && engine.reserve(p + u"2"_s, {}, {{u"A"_s, 1, {}}}).has_value()
        && engine.release(p + u"2"_s, u"cancel"_s).has_value()
        && engine.confirm(p + u"2"_s, u"late"_s + p).value_or(OrderChange{}).outcome == Outcome::RefundRequired
        && engine.reserve(p + u"3"_s, {}, {{u"A"_s, 1, {}}}).has_value()
        && engine.confirm(p + u"3"_s, u"pay"_s + p).has_value();
}

/// Runs `statements` on a connection of its own, as someone editing the book by hand would.
/// `bypassCheck`: I1 cannot break while the buckets' CHECK holds, so first it is switched
/// off: SQLite `PRAGMA ignore_check_constraints=ON` on this connection; PostgreSQL (a
/// throwaway database) drops the constraint.
QString corruptBook(const test::FreshBook &fresh, const QString &backend, bool bypassCheck,
                    const QStringList &statements)
{
    const bool sqlite = backend == u"sqlite"_s;
    QString problem;
    {
        QSqlDatabase db = sqlite ? QSqlDatabase::addDatabase(u"QSQLITE"_s, u"by-hand"_s)
                                 : addPostgresConnection(fresh.url(), u"by-hand"_s);
        if (sqlite)
            db.setDatabaseName(fresh.url().path);
        if (!db.open())
            return db.lastError().text();
        QSqlQuery q(db);
        QStringList all;
        if (bypassCheck && sqlite)
            all << u"PRAGMA ignore_check_constraints=ON"_s;
        if (bypassCheck && !sqlite) {
            if (!q.exec(u"SELECT conname FROM pg_constraint WHERE conrelid = 'buckets'::regclass AND contype = 'c' "
                        u"AND pg_get_constraintdef(oid) LIKE '%total%'"_s) || !q.next())
                return u"no CHECK on buckets to drop: "_s + q.lastError().text();
            all << u"ALTER TABLE buckets DROP CONSTRAINT "_s + q.value(0).toString();
        }
        all << statements;
        for (const QString &statement : std::as_const(all))
            if (!q.exec(statement) && problem.isEmpty())
                problem = statement + u": "_s + q.lastError().text();
        q.finish();
        db.close();
    }
    QSqlDatabase::removeDatabase(u"by-hand"_s);
    return problem;
}

/// Runs the `@` among `statements` (and takes them out): the ledger row of an ADJUST of -1
/// available, +1 locked in bucket 0 of A, written by hand as an adjustment the book did not
/// make (the bucket is moved by the statements around it).
Result<void> adjustByHand(Engine &engine, QStringList &statements)
{
    if (!statements.removeAll(u"@"_s))
        return {};
    auto levels = engine.book().levels(u"A"_s);
    if (!levels)
        return std::unexpected(levels.error());
    const BucketLevels b = levels->buckets.value(0);
    auto row = engine.database().exec(
        sql::insertLedger(engine.database().nowMsExpr()),
        {u"adj:999"_s, u"ADJUST"_s, u"A"_s, 0, QVariant(QMetaType::fromType<QString>()), -1, 1, 0, b.available + 1,
         b.locked - 1, b.sold, b.available, b.locked, b.sold, u"by-hand"_s, u"test"_s});
    if (!row)
        return std::unexpected(row.error());
    return {};
}

/// Loses the answer to the next COMMIT of a PostgreSQL session and keeps the book away: just
/// before the COMMIT goes out, the book's database stops taking connections and the session
/// is terminated (from a session of its own, opened first, on the server's `postgres`
/// database), so neither the COMMIT's answer
/// nor a replay reaches the book. comeBack() lets connections in again. Same thread as the
/// victim (Database::setWriteFaults).
class BookAwayAtCommit : public WriteFaults {
public:
    BookAwayAtCommit(const DbUrl &url, qint64 victimPid)
        : m_name(u"book-away"_s)
        , m_database(url.database)
        , m_pid(victimPid)
    {
        // From the server's own database: a session cannot shut out the one it is in.
        QSqlDatabase db = addPostgresConnection(url.withDatabase(u"postgres"_s), m_name);
        if (!db.open())
            m_problem = db.lastError().text();
    }
    ~BookAwayAtCommit() override
    {
        comeBack();
        QSqlDatabase::database(m_name, false).close();
        QSqlDatabase::removeDatabase(m_name);
    }
    bool failBeforeCommit() override { return false; }
    void beforeCommit() override
    {
        if (!std::exchange(m_armed, false))
            return;
        QSqlQuery q(QSqlDatabase::database(m_name, false));
        if (!q.exec(u"ALTER DATABASE %1 WITH ALLOW_CONNECTIONS false"_s.arg(m_database)))
            m_problem = q.lastError().text();
        if (!q.exec(u"SELECT pg_terminate_backend(%1)"_s.arg(m_pid)))
            m_problem = q.lastError().text();
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 10000 && q.exec(u"SELECT count(*) FROM pg_stat_activity WHERE pid = %1"_s.arg(m_pid))
               && q.next() && q.value(0).toLongLong() > 0)
            QThread::msleep(2);
        m_fired = true;
    }
    /// Connections are let in again.
    void comeBack()
    {
        QSqlQuery q(QSqlDatabase::database(m_name, false));
        if (m_fired && !q.exec(u"ALTER DATABASE %1 WITH ALLOW_CONNECTIONS true"_s.arg(m_database)))
            m_problem = q.lastError().text();
    }
    bool fired() const { return m_fired; }
    QString problem() const { return m_problem; }

private:
    QString m_name;
    QString m_database;
    qint64 m_pid;
    bool m_armed = true;
    bool m_fired = false;
    QString m_problem;
};

QString breachesText(const QSet<InvariantBreach> &set)
{
    QStringList out;
    for (const InvariantBreach &b : set)
        out << b.toString();
    out.sort();
    return out.join(u"; "_s);
}

} // namespace

class TestReconcile : public QObject {
    Q_OBJECT

private slots:
    void passIsRecordedInTheBook_data() { test::addBackendRows(); }
    void passIsRecordedInTheBook();
    void orphanPreDeduct_data() { test::addBackendRows(); }
    void fencedAttemptInABatch_data() { test::addBackendRows(); }
    void fencedAttemptInABatch();
    void orphanPreDeduct();
    void staleHoldAfterRedisRestart_data() { test::addBackendRows(); }
    void staleHoldAfterRedisRestart();
    void gateShortfallAndExcess_data() { test::addBackendRows(); }
    void gateShortfallAndExcess();
    void negativeDriftWaitsForApproval_data() { test::addBackendRows(); }
    void negativeDriftWaitsForApproval();
    void rejectKeepsTheDriftOpen_data() { test::addBackendRows(); }
    void rejectKeepsTheDriftOpen();
    void recurringDriftIsReportedAgain_data() { test::addBackendRows(); }
    void recurringDriftIsReportedAgain();
    void decisionTextIsBoundedAndSafe();
    void approverPolicyIsTheBooks_data() { test::addBackendRows(); }
    void approverPolicyIsTheBooks();
    void largeCorrectionNeedsTwoApprovers_data() { test::addBackendRows(); }
    void largeCorrectionNeedsTwoApprovers();
    void approversRacingApplyOnce_data();
    void approversRacingApplyOnce();
    void bookOnlyReservePaused();
    void releaseTheGateMissedFreesTheBuyer();
    void stalePauseIsLifted();
    void passPushesTheBooksSale();
    void oneProcessSendsEachAlert_data() { test::addBackendRows(); }
    void oneProcessSendsEachAlert();
    void rowsWrittenDuringAPassAreTheNextPasss_data() { test::addBackendRows(); }
    void rowsWrittenDuringAPassAreTheNextPasss();
    void orderLedgerMismatch_data() { test::addBackendRows(); }
    void orderLedgerMismatch();
    void unrefundedPayment_data() { test::addBackendRows(); }
    void unrefundedPayment();
    void crashWindowRealCli();
    void checkAndPassFindTheSame_data();
    void checkAndPassFindTheSame();
    void approvalLeavesTheGateAsRebuildWould_data() { test::addBackendRows(); }
    void approvalLeavesTheGateAsRebuildWould();
    void batchesFindWhatOneStatementFinds_data();
    void batchesFindWhatOneStatementFinds();
    void approvalAppliesWhatTheApproverSaw_data() { test::addBackendRows(); }
    void approvalAppliesWhatTheApproverSaw();
    void everyPauseHasAWayOut_data();
    void everyPauseHasAWayOut();
    void fourEyesAreTwoPeople_data() { test::addBackendRows(); }
    void fourEyesAreTwoPeople();
    void passesSpendIdsOnlyOnNewDiscrepancies_data() { test::addBackendRows(); }
    void passesSpendIdsOnlyOnNewDiscrepancies();
    void unknownOutcomeIsResolvedByItsProcess();
};

void TestReconcile::passIsRecordedInTheBook()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    ReconcilePassStore passes(engine->database());
    QCOMPARE(FS_OK(passes.last()), std::nullopt);
    auto g = engine->gate()->reserve(u"A"_s, u"o1"_s, {}, 3); // an orphan: healed by the pass
    QVERIFY(g && g->code == GateCode::Reserved);
    const qint64 before = FS_OK(engine->database().nowMs());
    Reconciler rec(*engine);
    const ReconcileReport report = FS_OK(rec.runPass(0));
    const qint64 after = FS_OK(engine->database().nowMs());
    const auto recorded = FS_OK(passes.last());
    QVERIFY(recorded);
    QVERIFY2(recorded->finishedAtMs >= before && recorded->finishedAtMs <= after,
             qPrintable(u"%1 not in [%2, %3]"_s.arg(recorded->finishedAtMs).arg(before).arg(after)));
    QVERIFY(recorded->durationMs >= 0 && recorded->durationMs <= after - before + 1000);
    QCOMPARE(recorded->autoFixed, 1);
    QCOMPARE(recorded->autoFixed, qint64(report.autoFixed));
    QCOMPARE(recorded->pendingApproval, 0);
    QCOMPARE(recorded->warnings, 0);
    // The next pass replaces it: nothing new found.
    FS_VERIFY_OK(rec.runPass(0));
    QCOMPARE(FS_OK(passes.last())->autoFixed, 0);
}

void TestReconcile::orphanPreDeduct()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    // The gate took 3 units, the process died before the book.
    auto g = engine->gate()->reserve(u"A"_s, u"o1"_s, {}, 3);
    QVERIFY(g && g->code == GateCode::Reserved);
    Reconciler rec(*engine);
    auto young = rec.runPass(30000);
    QVERIFY(young && young->discrepancies.isEmpty()); // within the grace: in flight
    const ReconcileReport report = passTwice(rec, 0);
    QCOMPARE(report.discrepancies.size(), 1);
    const Discrepancy &d = report.discrepancies.first();
    QCOMPARE(d.kind, DiscrepancyKind::OrphanPreDeduct);
    QCOMPARE(d.status, DiscrepancyStatus::AutoFixed);
    QCOMPARE(d.delta, 3);
    QCOMPARE(d.token, g->token);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 10);
    auto status = engine->book().orderStatus(u"o1"_s);
    QVERIFY(status && *status == OrderStatus::Abandoned);
    // The late book step of that attempt fails on the fence (transient: it never commits).
    auto late = engine->book().reserve(u"o1"_s, {}, {{u"A"_s, 3, g->token}}, 60);
    QVERIFY(!late);
    QCOMPARE(late.error().code, ErrorCode::Conflict);
    QVERIFY(test::bookHolds(*engine));
    // The order itself reserves again: the retry gets a fresh token, which no fence holds.
    auto retry = engine->reserve(u"o1"_s, {}, {{u"A"_s, 3, {}}});
    FS_VERIFY_OK(retry);
    QCOMPARE(retry->outcome, Outcome::Reserved);
    const QString newToken = retry->lines.first().token;
    QVERIFY(!newToken.isEmpty() && newToken != g->token);
    QCOMPARE(FS_OK(engine->book().orderStatus(u"o1"_s)), std::optional(OrderStatus::Pending));
    // The stale attempt once more: it gets the order as it is, nothing moves.
    auto stale = engine->book().reserve(u"o1"_s, {}, {{u"A"_s, 3, g->token}}, 60);
    FS_VERIFY_OK(stale);
    QCOMPARE(stale->lines.first().token, newToken);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).locked, 3);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 7);
    QVERIFY(test::bookHolds(*engine));
    auto quiet = rec.runPass(0);
    QVERIFY(quiet && quiet->discrepancies.isEmpty());
    FS_VERIFY_OK(engine->confirm(u"o1"_s, u"pay1"_s));
    QVERIFY(test::bookHolds(*engine));
}

void TestReconcile::fencedAttemptInABatch()
{
    // The group-commit path (Book::reserveBatch, as the server's book writers run it): a
    // fenced attempt fails alone, its neighbours reserve, and the order's retry with a fresh
    // token takes the order over inside a batch as well.
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto g1 = engine->gate()->reserve(u"A"_s, u"o1"_s, {}, 3);
    QVERIFY(g1 && g1->code == GateCode::Reserved);
    Reconciler rec(*engine);
    passTwice(rec, 0);
    QCOMPARE(FS_OK(engine->book().orderStatus(u"o1"_s)), std::optional(OrderStatus::Abandoned));

    const auto late = engine->book().reserveBatch({ReserveOrder{u"o1"_s, {}, {{u"A"_s, 3, g1->token}}, 60, {}},
                                                   ReserveOrder{u"o2"_s, {}, {{u"A"_s, 2, {}}}, 60, {}}});
    QCOMPARE(late.size(), 2);
    QVERIFY(!late.at(0));
    QCOMPARE(late.at(0).error().code, ErrorCode::Conflict);
    QVERIFY2(late.at(0).error().message.contains(u"send the reserve again"_s), qPrintable(late.at(0).error().message));
    QVERIFY(late.at(1) && late.at(1)->outcome == Outcome::Reserved);
    QCOMPARE(FS_OK(engine->book().orderStatus(u"o1"_s)), std::optional(OrderStatus::Abandoned));

    auto g2 = engine->gate()->reserve(u"A"_s, u"o1"_s, {}, 3);
    QVERIFY(g2 && g2->code == GateCode::Reserved && g2->token != g1->token);
    const auto retry = engine->book().reserveBatch({ReserveOrder{u"o3"_s, {}, {{u"A"_s, 1, {}}}, 60, {}},
                                                    ReserveOrder{u"o1"_s, {}, {{u"A"_s, 3, g2->token}}, 60, {}}});
    QVERIFY(retry.at(0) && retry.at(0)->outcome == Outcome::Reserved);
    QVERIFY2(retry.at(1) && retry.at(1)->outcome == Outcome::Reserved,
             qPrintable(retry.at(1) ? QString() : retry.at(1).error().message));
    QCOMPARE(retry.at(1)->lines.first().token, g2->token);
    QCOMPARE(FS_OK(engine->book().orderStatus(u"o1"_s)), std::optional(OrderStatus::Pending));
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).locked, 6);
    QVERIFY(test::bookHolds(*engine));
}

void TestReconcile::staleHoldAfterRedisRestart()
{
    QFETCH(QString, backend);
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    FS_FRESH_BOOK(fresh, backend);
    RedisFixture redis;
    QVERIFY(redis.start());
    auto engine = test::openEngine(fresh.url(), redis.url(300));
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto r = engine->reserve(u"o1"_s, {}, {{u"A"_s, 2, {}}});
    QVERIFY(r && r->outcome == Outcome::Reserved);
    const QString token = r->lines.first().token;
    // The fixture has no persistence: save the SKU's gate keys, as an AOF would keep them.
    QList<QList<QByteArray>> restore;
    for (const char *key : {"gate", "open"}) {
        auto dump = redis.command({"DUMP", GateKeys::key(u"A"_s, key)});
        QVERIFY(dump && dump->type == RedisValue::Type::String);
        restore << QList<QByteArray>{"RESTORE", GateKeys::key(u"A"_s, key), "0", dump->str, "REPLACE"};
    }
    redis.stop();
    auto released = engine->release(u"o1"_s, u"cancel"_s);
    QVERIFY(released && released->outcome == Outcome::Released); // the book releases, the gate cannot
    QVERIFY(!engine->takeWarnings().isEmpty());
    QVERIFY(redis.restart());
    for (const auto &cmd : restore)
        FS_VERIFY_OK(redis.command(cmd));
    QCOMPARE(engine->gateLevels(u"A"_s).available, 8);

    Reconciler rec(*engine);
    const ReconcileReport report = passTwice(rec);
    QCOMPARE(report.discrepancies.size(), 1);
    QCOMPARE(report.discrepancies.first().kind, DiscrepancyKind::StaleHold);
    QCOMPARE(report.discrepancies.first().status, DiscrepancyStatus::AutoFixed);
    QCOMPARE(report.discrepancies.first().delta, 2);
    QCOMPARE(report.discrepancies.first().token, token);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 10);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 10);
}

void TestReconcile::gateShortfallAndExcess()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    Reconciler rec(*engine);
    FS_VERIFY_OK(redis.command({"HSET", GateKeys::key(u"A"_s, "gate"), "available", "7"}));
    ReconcileReport report = passTwice(rec);
    QCOMPARE(report.discrepancies.size(), 1);
    QCOMPARE(report.discrepancies.first().kind, DiscrepancyKind::GateShortfall);
    QCOMPARE(report.discrepancies.first().delta, 3);
    QCOMPARE(report.discrepancies.first().gateValue, 7);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 10);

    FS_VERIFY_OK(redis.command({"HSET", GateKeys::key(u"A"_s, "gate"), "available", "13"}));
    report = passTwice(rec);
    QCOMPARE(report.discrepancies.size(), 1);
    QCOMPARE(report.discrepancies.first().kind, DiscrepancyKind::GateExcess);
    QCOMPARE(report.discrepancies.first().delta, -3);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 10);
    QCOMPARE(report.stillPending, 0);
}

void TestReconcile::negativeDriftWaitsForApproval()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5 WHERE sku = 'A'"_s));
    Reconciler rec(*engine);
    const ReconcileReport report = passTwice(rec);
    QCOMPARE(report.discrepancies.size(), 1);
    const Discrepancy d = report.discrepancies.first();
    QCOMPARE(d.kind, DiscrepancyKind::LedgerMismatch);
    QCOMPARE(d.status, DiscrepancyStatus::PendingApproval);
    QCOMPARE(d.delta, -5);
    QCOMPARE(d.correction, Correction(RestoreBucket{Levels3{15, 0, 0}, Levels3{10, 0, 0}}));
    QCOMPARE(report.stillPending, 1);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 15); // never applied by itself
    auto paused = engine->reserve(u"p1"_s, {}, {{u"A"_s, 1, {}}});
    FS_VERIFY_OK(paused);
    QCOMPARE(paused->outcome, Outcome::Paused);
    // Redis loses its data (a restart without persistence): the gate is restored from the
    // book, pause first, so the SKU stays paused.
    FS_VERIFY_OK(redis.command({"FLUSHALL"}));
    QCOMPARE(FS_OK(engine->reserve(u"p2"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Paused);

    auto refused = test::approveAsShown(rec, d.id, test::by(u"mallory"_s), u"trust me"_s, kApprovers);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::NotPermitted);
    const qint64 ledgerBefore = FS_OK(engine->book().ledgerCount());
    auto first = test::approveAsShown(rec, d.id, test::by(u"alice"_s), u"counted"_s, kApprovers);
    QVERIFY2(first, first ? "" : qPrintable(first.error().message));
    QCOMPARE(first->status, DiscrepancyStatus::Approved);
    QCOMPARE(first->resolvedBy, u"alice"_s);
    auto second = test::approveAsShown(rec, d.id, test::by(u"alice"_s), u"counted again"_s, kApprovers);
    QVERIFY(second && second->status == DiscrepancyStatus::Approved);
    QCOMPARE(FS_OK(engine->book().ledgerCount()), ledgerBefore + 1); // applied once
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 10);
    // The approval's ledger row says what moved, why and which discrepancy it resolves.
    const LedgerRow adjust = FS_OK(engine->book().ledgerOfSku(u"A"_s)).last();
    QCOMPARE(adjust.operation, u"ADJUST"_s);
    QCOMPARE(adjust.adjustmentKind, u"correction"_s);
    QCOMPARE(adjust.adjustmentUnits, -5);
    QCOMPARE(adjust.discrepancy, d.id);
    QCOMPARE(adjust.reason, u"counted"_s);
    QCOMPARE(adjustmentText(adjust), u"correction -5 (discrepancy #%1): counted"_s.arg(d.id));
    QCOMPARE(FS_OK(engine->book().ledgerOfOrder(adjust.order)).first().discrepancy, d.id);
    QVERIFY(test::bookHolds(*engine));
    QCOMPARE(engine->gateLevels(u"A"_s).available, 10);
    auto open = engine->reserve(u"p2"_s, {}, {{u"A"_s, 1, {}}});
    QVERIFY(open && open->outcome == Outcome::Reserved); // unpaused
    auto after = rec.runPass(0);
    QVERIFY(after && after->discrepancies.isEmpty() && after->stillPending == 0);
}

void TestReconcile::rejectKeepsTheDriftOpen()
{
    // Rejecting a correction never leaves the book disagreeing with its ledger while the SKU
    // sells: the discrepancy stays open and paused, proposing the other correction; it
    // closes once one is approved (or the bucket was set right by hand).
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available - 4, total = total - 4 WHERE sku = 'A'"_s));
    Reconciler rec(*engine);
    const ReconcileReport report = passTwice(rec);
    QCOMPARE(report.discrepancies.size(), 1);
    const Discrepancy found = report.discrepancies.first();
    QCOMPARE(found.delta, 4);
    QCOMPARE(found.correction, Correction(RestoreBucket{Levels3{6, 0, 0}, Levels3{10, 0, 0}}));
    auto rejected = rec.reject(found.id, test::by(u"alice"_s), u"recount first"_s, kApprovers);
    FS_VERIFY_OK(rejected);
    QCOMPARE(rejected->status, DiscrepancyStatus::PendingApproval);
    QCOMPARE(rejected->correction, Correction(AcceptStocktake{Levels3{6, 0, 0}, Levels3{10, 0, 0}}));
    QVERIFY2(rejected->detail.contains(u"rejected by alice (recount first)"_s), qPrintable(rejected->detail));
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 6);
    QCOMPARE(FS_OK(engine->reserve(u"p1"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Paused);
    auto again = rec.runPass(0);
    QVERIFY(again && again->discrepancies.isEmpty() && again->stillPending == 1);
    // The count is taken as a stocktake: the ledger explains 6 now, the SKU sells.
    auto taken = test::approveAsShown(rec, found.id, test::by(u"alice"_s), u"counted 6"_s, kApprovers);
    FS_VERIFY_OK(taken);
    QCOMPARE(taken->status, DiscrepancyStatus::Approved);
    QVERIFY(test::bookHolds(*engine));
    QCOMPARE(FS_OK(engine->reserve(u"p2"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    auto quiet = rec.runPass(0);
    QVERIFY(quiet && quiet->discrepancies.isEmpty() && quiet->stillPending == 0);

    // Set right by hand: a rejection closes it.
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available + 2, total = total + 2 WHERE sku = 'A'"_s));
    auto second = rec.runPass(0);
    QVERIFY(second && second->pendingApproval == 1);
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available - 2, total = total - 2 WHERE sku = 'A'"_s));
    auto closed = rec.reject(second->discrepancies.first().id, test::by(u"alice"_s), u"fixed by hand"_s, kApprovers);
    FS_VERIFY_OK(closed);
    QCOMPARE(closed->status, DiscrepancyStatus::Rejected);
    QCOMPARE(FS_OK(engine->reserve(u"p3"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
}

void TestReconcile::recurringDriftIsReportedAgain()
{
    // The same 1-unit loss after the first was approved and fixed is a new discrepancy that
    // pauses the SKU again, however much it looks like the old one.
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    Reconciler rec(*engine);
    qint64 previous = 0;
    for (int round = 0; round < 2; ++round) {
        QVERIFY(engine->database().exec(
            u"UPDATE buckets SET available = available - 1, total = total - 1 WHERE sku = 'A'"_s));
        const ReconcileReport report = passTwice(rec);
        QCOMPARE(report.pendingApproval, 1);
        const Discrepancy d = report.discrepancies.first();
        QVERIFY(d.id != previous);
        QCOMPARE(d.delta, 1);
        QCOMPARE(FS_OK(engine->reserve(u"p%1"_s.arg(round), {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Paused);
        FS_VERIFY_OK(test::approveAsShown(rec, d.id, test::by(u"alice"_s), u"found it"_s, kApprovers));
        QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 10);
        previous = d.id;
    }
}

void TestReconcile::decisionTextIsBoundedAndSafe()
{
    // Reasons and approver names follow the one free-text rule: at most 500 characters, no
    // control, bidi or zero-width characters; nothing is decided otherwise.
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = 9, total = 9 WHERE sku = 'A'"_s));
    Reconciler rec(*engine);
    auto report = rec.runPass(0);
    QVERIFY(report && report->pendingApproval == 1);
    const qint64 id = report->discrepancies.first().id;
    const QStringList spoofer{u"al\u202Eice"_s};
    for (const auto &[who, reason, field] :
         {std::tuple{u"alice"_s, QString(501, u'r'), u"reason"_s}, std::tuple{u"alice"_s, u"ok\n\x1b[2J"_s, u"reason"_s},
          std::tuple{u"alice"_s, u"ok\u2066fake\u2069"_s, u"reason"_s}, std::tuple{spoofer.first(), u"ok"_s, u"operator"_s}}) {
        auto refused = test::approveAsShown(rec, id, test::by(who), reason, who == u"alice"_s ? kApprovers : spoofer);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::InvalidArgument);
        QCOMPARE(refused.error().field, field);
    }
    QCOMPARE(FS_OK(rec.get(id)).status, DiscrepancyStatus::PendingApproval);
    QCOMPARE(printable(u"a\nb\x1b[2Jc\u202E"_s), u"a\\nb\\u{001b}[2Jc\\u{202e}"_s);
}

void TestReconcile::approverPolicyIsTheBooks()
{
    // Who may decide is the book's: the data dir's list seeds it once, the environment and
    // a later seed never widen it, changes need an approver, and every decision records the
    // OS user, host and (PostgreSQL) database role beside the asserted operator.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = 9, total = 9 WHERE sku = 'A'"_s));
    Reconciler rec(*engine);
    auto report = rec.runPass(0);
    QVERIFY(report && report->pendingApproval == 1);
    const qint64 id = report->discrepancies.first().id;
    ApproverStore approvers(engine->database());
    QCOMPARE(FS_OK(approvers.policy({})).approvers, QStringList()); // none yet, nothing to seed
    QCOMPARE(FS_OK(approvers.policy(kApprovers)).approvers, kApprovers); // seeded once
    QCOMPARE(FS_OK(approvers.policy({u"mallory"_s})).approvers, kApprovers); // never again
    QCOMPARE(FS_OK(approvers.policy({})).fourEyesUnits, 100);
    qputenv("FLASHSTOCK_APPROVERS", "mallory");
    const auto unset = qScopeGuard([] { qunsetenv("FLASHSTOCK_APPROVERS"); });
    auto refused = test::approveAsShown(rec, id, test::by(u"mallory"_s), u"trust me"_s, {u"mallory"_s});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::NotPermitted);
    QCOMPARE(FS_OK(rec.get(id)).decisions.size(), 0); // a refusal decides nothing
    // Changes: by an approver only; the last approver stays.
    auto selfMade = approvers.add(u"mallory"_s, u"mallory"_s);
    QVERIFY(!selfMade);
    QCOMPARE(selfMade.error().code, ErrorCode::NotPermitted);
    QCOMPARE(FS_OK(approvers.add(u"bob"_s, u"alice"_s)), true);
    QCOMPARE(FS_OK(approvers.add(u"bob"_s, u"alice"_s)), false);
    FS_VERIFY_OK(approvers.remove(u"alice"_s, u"bob"_s));
    auto last = approvers.remove(u"bob"_s, u"bob"_s);
    QVERIFY(!last);
    QCOMPARE(last.error().field, u"name"_s);
    QCOMPARE(FS_OK(approvers.policy(kApprovers)).approvers, QStringList{u"bob"_s});
    auto gone = test::approveAsShown(rec, id, test::by(u"alice"_s), u"counted"_s, kApprovers);
    QVERIFY(!gone);
    QCOMPARE(gone.error().code, ErrorCode::NotPermitted);

    const Discrepancy done = FS_OK(test::approveAsShown(rec, id, test::by(u"bob"_s), u"counted"_s, kApprovers));
    QCOMPARE(done.status, DiscrepancyStatus::Approved);
    const Discrepancy shown = FS_OK(rec.get(id));
    QCOMPARE(shown.decisions.size(), 1);
    const DecisionRecord &r = shown.decisions.first();
    QCOMPARE(r.operatorName, u"bob"_s);
    QCOMPARE(r.osUser, QString::fromLocal8Bit(getpwuid(geteuid())->pw_name));
    QCOMPARE(r.host, QSysInfo::machineHostName());
    QCOMPARE(r.dbRole, backend == u"sqlite"_s ? QString() : fresh.url().user);
    QVERIFY(r.applied);
}

void TestReconcile::largeCorrectionNeedsTwoApprovers()
{
    // Four eyes: a correction above the policy's units needs a second, different approver.
    // The first approval records and moves nothing; the same approver again is refused; a
    // second approver applies it, once. At or below the limit, one approver is enough.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 1000));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = 850, total = 850 WHERE sku = 'A'"_s));
    Reconciler rec(*engine);
    auto report = rec.runPass(0);
    QVERIFY(report && report->pendingApproval == 1);
    const qint64 id = report->discrepancies.first().id;
    QCOMPARE(correctionUnits(report->discrepancies.first()), 150);
    ApproverStore approvers(engine->database());
    FS_VERIFY_OK(approvers.policy(kApprovers));
    FS_VERIFY_OK(approvers.add(u"bob"_s, u"alice"_s));
    const qint64 ledgerBefore = FS_OK(engine->book().ledgerCount());

    // A reason with a placeholder in it is kept as written, and the note's figures stay theirs.
    const Discrepancy first =
        FS_OK(test::approveAsShown(rec, id, test::by(u"alice"_s), u"counted 850, %3 short"_s, kApprovers));
    QCOMPARE(first.status, DiscrepancyStatus::PendingApproval);
    QVERIFY(first.awaitsSecondApprover());
    QVERIFY2(first.detail.contains(u"approved by alice (counted 850, %3 short): a correction of 150 units (above 100)"_s),
             qPrintable(first.detail));
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 850);
    QCOMPARE(FS_OK(engine->reserve(u"p1"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Paused);
    auto again = test::approveAsShown(rec, id, test::by(u"alice"_s), u"really"_s, kApprovers);
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::NotPermitted);
    QVERIFY2(again.error().message.contains(u"second, different approver"_s), qPrintable(again.error().message));

    // bob at his own machine (four eyes are two people: fourEyesAreTwoPeople).
    const Discrepancy second =
        FS_OK(test::approveAsShown(rec, id, test::byAt(u"bob"_s, u"bobs-laptop"_s), u"agreed"_s, kApprovers));
    QCOMPARE(second.status, DiscrepancyStatus::Approved);
    QCOMPARE(second.resolvedBy, u"bob"_s);
    QCOMPARE(second.resolvers(), (QStringList{u"alice"_s, u"bob"_s}));
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 1000);
    QCOMPARE(FS_OK(engine->book().ledgerCount()), ledgerBefore + 1);
    QCOMPARE(second.decisions.size(), 2);
    QCOMPARE(second.decisions.at(0).applied, false);
    QCOMPARE(second.decisions.at(1).applied, true);

    // Raised to 200: the same size needs one approver.
    FS_VERIFY_OK(approvers.setFourEyesUnits(200, u"bob"_s));
    auto notAnApprover = approvers.setFourEyesUnits(0, u"mallory"_s);
    QVERIFY(!notAnApprover);
    QCOMPARE(notAnApprover.error().code, ErrorCode::NotPermitted);
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = 850, total = 850 WHERE sku = 'A'"_s));
    auto next = rec.runPass(0);
    QVERIFY(next && next->pendingApproval == 1);
    QCOMPARE(FS_OK(test::approveAsShown(rec, next->discrepancies.first().id, test::by(u"alice"_s), u"counted"_s, kApprovers)).status,
             DiscrepancyStatus::Approved);
}

void TestReconcile::approversRacingApplyOnce_data()
{
    QTest::addColumn<QString>("backend");
    QTest::addColumn<qint64>("fourEyesUnits");
    for (const QString &b : test::bookBackends()) {
        QTest::newRow(qPrintable(b + u"/one approval"_s)) << b << qint64(200);
        QTest::newRow(qPrintable(b + u"/four eyes"_s)) << b << qint64(100);
    }
}

void TestReconcile::approversRacingApplyOnce()
{
    // alice and bob approve the same held correction at the same moment, each through its
    // own engine (its own book connection, its own thread), ten times over. With one
    // approval enough, one of them applies it and the other finds it decided; with four
    // eyes, one records the first approval and the other applies it. Either way the
    // correction moves the stock once: one ledger row, one applied decision.
    QFETCH(QString, backend);
    QFETCH(qint64, fourEyesUnits);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 1000));
    ApproverStore approvers(engine->database());
    FS_VERIFY_OK(approvers.policy(kApprovers));
    FS_VERIFY_OK(approvers.add(u"bob"_s, u"alice"_s));
    FS_VERIFY_OK(approvers.setFourEyesUnits(fourEyesUnits, u"alice"_s));
    Reconciler rec(*engine);
    // Two people: bob approves from his own machine.
    const QList<DecisionBy> who{test::by(u"alice"_s), test::byAt(u"bob"_s, u"bobs-laptop"_s)};
    for (int round = 0; round < 10; ++round) {
        QVERIFY(engine->database().exec(u"UPDATE buckets SET available = 850, total = 850 WHERE sku = 'A'"_s));
        auto report = rec.runPass(0);
        QVERIFY(report && report->pendingApproval == 1);
        const qint64 id = report->discrepancies.first().id;
        QCOMPARE(correctionUnits(report->discrepancies.first()), 150);
        const qint64 ledgerBefore = FS_OK(engine->book().ledgerCount());

        std::barrier together(2);
        QList<std::optional<Error>> errors(2);
        std::vector<std::thread> threads;
        for (int t = 0; t < 2; ++t) {
            threads.emplace_back([&, t] {
                auto own = test::openEngine(fresh.url());
                if (!own) {
                    errors[t] = Error{ErrorCode::Unavailable, u"no engine"_s, {}};
                    together.arrive_and_drop();
                    return;
                }
                Reconciler mine(*own);
                together.arrive_and_wait();
                if (auto r = test::approveAsShown(mine, id, who[t], u"counted"_s, kApprovers); !r)
                    errors[t] = r.error();
            });
        }
        for (auto &t : threads)
            t.join();
        for (const auto &e : errors)
            QVERIFY2(!e, e ? qPrintable(e->message) : "");
        const Discrepancy decided = FS_OK(rec.get(id));
        QCOMPARE(decided.status, DiscrepancyStatus::Approved);
        const QList<DecisionRecord> &records = decided.decisions;
        QCOMPARE(std::count_if(records.cbegin(), records.cend(), [](const DecisionRecord &r) { return r.applied; }), 1);
        QCOMPARE(records.size(), fourEyesUnits < 150 ? 2 : 1);
        QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 1000);
        QCOMPARE(FS_OK(engine->book().ledgerCount()), ledgerBefore + 1);
    }
    QVERIFY(test::bookHolds(*engine));
}

void TestReconcile::bookOnlyReservePaused()
{
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available + 1, total = total + 1"_s));
    Reconciler rec(*engine);
    auto report = rec.runPass(0);
    QVERIFY(report && report->pendingApproval == 1);
    auto r = engine->reserve(u"o1"_s, {}, {{u"A"_s, 1, {}}});
    QVERIFY(r && r->outcome == Outcome::Paused);
}

void TestReconcile::releaseTheGateMissedFreesTheBuyer()
{
    // Redis lost its data while carol held 2 units (limit 2); the gate was refilled from the
    // book, without her token. Her release cannot reach the gate; the reconciler's heal of
    // the gate's stock corrects her count too, so she can buy again.
    FS_GATED_ENGINE(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto sale = engine->createSale(u"A"_s, 0, 0, 120, 2);
    QVERIFY(sale && engine->setSaleStatus(sale->id, SaleStatus::Open).has_value());
    QCOMPARE(FS_OK(engine->reserve(u"c1"_s, u"carol"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    FS_VERIFY_OK(redis.command({"FLUSHALL"}));
    QCOMPARE(FS_OK(engine->reserve(u"d1"_s, u"dave"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved); // restores
    QCOMPARE(FS_OK(engine->reserve(u"c2"_s, u"carol"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::LimitExceeded);
    QCOMPARE(FS_OK(engine->release(u"c1"_s, u"cancel"_s)).outcome, Outcome::Released);
    (void)engine->takeWarnings(); // the gate did not know the token
    Reconciler rec(*engine);
    const ReconcileReport report = passTwice(rec);
    QCOMPARE(report.autoFixed, 1); // the gate's shortfall of carol's 2 units
    QCOMPARE(engine->gateLevels(u"A"_s).available, 9);
    QCOMPARE(FS_OK(engine->reserve(u"c3"_s, u"carol"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
}

void TestReconcile::stalePauseIsLifted()
{
    // A discrepancy approved while the gate was away leaves the gate's pause behind: the
    // next pass (or a gate rebuild) lifts it, as the book no longer pauses the SKU.
    FS_GATED_ENGINE(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
    Reconciler rec(*engine);
    auto first = rec.runPass(0);
    QVERIFY(first && first->pendingApproval == 1);
    QCOMPARE(FS_OK(engine->reserve(u"p1"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Paused);
    {
        auto bookOnly = test::openEngine(fresh.url()); // no gate: the approval cannot unpause it
        QVERIFY(bookOnly);
        Reconciler offline(*bookOnly);
        FS_VERIFY_OK(test::approveAsShown(offline, first->discrepancies.first().id, test::by(u"alice"_s), u"counted"_s, kApprovers));
    }
    QCOMPARE(FS_OK(engine->reserve(u"p2"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Paused); // stale
    FS_VERIFY_OK(engine->rebuildGate(u"A"_s));
    QCOMPARE(FS_OK(engine->reserve(u"p3"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    FS_VERIFY_OK(engine->gate()->setPaused(u"A"_s, true)); // stale again
    FS_VERIFY_OK(rec.runPass(0));
    QCOMPARE(FS_OK(engine->reserve(u"p4"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
}

void TestReconcile::passPushesTheBooksSale()
{
    // A gate that missed a start (two operators racing, or down at the time) has the open
    // sale closed: every pass pushes the sale as the book holds it.
    FS_GATED_ENGINE(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto sale = engine->createSale(u"A"_s, 0, 0, 120, 0);
    QVERIFY(sale && engine->setSaleStatus(sale->id, SaleStatus::Open).has_value());
    FS_VERIFY_OK(engine->gate()->setSale(u"A"_s, GateSale{false, 0, 0, 0}));
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::SaleClosed);
    Reconciler rec(*engine);
    FS_VERIFY_OK(rec.runPass(0));
    QCOMPARE(FS_OK(engine->reserve(u"o2"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
}

void TestReconcile::oneProcessSendsEachAlert()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available + 1, total = total + 1"_s));
    Reconciler rec(*engine);
    FS_VERIFY_OK(rec.runPass(0));
    auto pending = rec.unalerted();
    QVERIFY(pending && pending->size() == 1);
    const qint64 id = pending->first().id;
    // Two reconcile processes (two engines, as two processes would have) see the same alert.
    auto other = test::openEngine(fresh.url());
    QVERIFY(other);
    Reconciler rec2(*other);
    QCOMPARE(FS_OK(rec.claimAlert(id, 60000)), true);
    QCOMPARE(FS_OK(rec2.claimAlert(id, 60000)), false); // taken: the other one sends it
    FS_VERIFY_OK(rec.finishAlert(id, false));      // not delivered: the claim goes back
    QCOMPARE(FS_OK(rec2.claimAlert(id, 60000)), true);
    FS_VERIFY_OK(rec2.finishAlert(id, true));
    QCOMPARE(FS_OK(rec.claimAlert(id, 0)), false);       // delivered: never again
    QVERIFY(FS_OK(rec.unalerted()).isEmpty());
}

void TestReconcile::orderLedgerMismatch()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(engine->reserve(u"o1"_s, {}, {{u"A"_s, 2, {}}}));
    QVERIFY(engine->database().exec(u"UPDATE orders SET status = 'PAID' WHERE order_id = 'o1'"_s));
    Reconciler rec(*engine);
    const ReconcileReport report = passTwice(rec);
    QCOMPARE(report.discrepancies.size(), 1);
    const Discrepancy d = report.discrepancies.first();
    QCOMPARE(d.kind, DiscrepancyKind::OrderLedgerMismatch);
    QCOMPARE(d.delta, 2);
    QCOMPARE(d.correction, Correction(ChangeOrderStatus{OrderStatus::Paid, OrderStatus::Pending}));
    auto ok = test::approveAsShown(rec, d.id, test::by(u"alice"_s), u"no payment arrived"_s, kApprovers);
    QVERIFY(ok && ok->status == DiscrepancyStatus::Approved);
    QCOMPARE(*FS_OK(engine->book().orderStatus(u"o1"_s)), OrderStatus::Pending);
    QVERIFY(test::bookHolds(*engine));
}

void TestReconcile::rowsWrittenDuringAPassAreTheNextPasss()
{
    // A pass that takes longer than the watermark's lag (here: lag 0, and its gate check
    // held up by CLIENT PAUSE) while an order is written and then broken (PAID without a
    // SELL): the pass's book check began before that order, so the watermark must not pass
    // its rows; the next pass checks them and finds the mismatch.
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    Reconciler rec(*engine);
    rec.setWatermarkLagMs(0);
    FS_VERIFY_OK(rec.runPass(0)); // the watermark past the SKU's rows
    RedisConnection pauser(redis.url());
    FS_VERIFY_OK(pauser.command({"CLIENT", "PAUSE", "900", "ALL"}));
    std::thread writer([&] {
        QThread::msleep(300); // the pass's book check is done; its gate check waits
        auto own = test::openEngine(fresh.url());
        if (!own || !own->reserve(u"late"_s, {}, {{u"A"_s, 2, {}}}))
            return;
        (void)own->database().exec(u"UPDATE orders SET status = 'PAID' WHERE order_id = 'late'"_s);
    });
    auto during = rec.runPass(0);
    writer.join();
    FS_VERIFY_OK(during);
    QCOMPARE(FS_OK(engine->book().orderStatus(u"late"_s)), std::optional(OrderStatus::Paid));
    // The gate check may heal the gate to the book (the order came without a token); the
    // order's mismatch came after the book check.
    const auto mismatches = [](const ReconcileReport &r) {
        QStringList out;
        for (const Discrepancy &d : r.discrepancies)
            if (d.kind == DiscrepancyKind::OrderLedgerMismatch)
                out << d.order;
        return out;
    };
    QCOMPARE(mismatches(*during), QStringList{});
    QCOMPARE(mismatches(FS_OK(rec.runPass(0))), QStringList{u"late"_s});
}

void TestReconcile::unrefundedPayment()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QVERIFY(engine->reserve(u"o1"_s, {}, {{u"A"_s, 2, {}}}));
    QVERIFY(engine->release(u"o1"_s, u"cancel"_s));
    QVERIFY(engine->database().exec(u"UPDATE orders SET payment_ref = 'pay9' WHERE order_id = 'o1'"_s));
    Reconciler rec(*engine);
    const ReconcileReport report = passTwice(rec);
    QCOMPARE(report.discrepancies.size(), 1);
    QCOMPARE(report.discrepancies.first().kind, DiscrepancyKind::UnrefundedPayment);
    QCOMPARE(report.discrepancies.first().delta, 1);
    auto ok = test::approveAsShown(rec, report.discrepancies.first().id, test::by(u"alice"_s), u"refund it"_s, kApprovers);
    QVERIFY(ok && ok->status == DiscrepancyStatus::Approved);
    QCOMPARE(FS_OK(engine->book().refundCount(u"o1"_s)), 1);
    QVERIFY(test::bookHolds(*engine));
}

void TestReconcile::crashWindowRealCli()
{
    // PostgreSQL: another session holds the bucket row, so the CLI blocks inside the book
    // after the gate took its units (SQLite would block it earlier, in its migration check).
    FS_GATED_ENGINE(u"postgresql"_s);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    // A second session, by hand: a transaction left open on purpose.
    test::BucketRowsHeld rows(fresh.url(), u"A"_s);
    QVERIFY2(rows.problem().isEmpty(), qPrintable(rows.problem()));

    QProcess cli;
    cli.start(QStringLiteral(FLASHSTOCK_CLI_PATH),
              {u"reserve"_s, u"--order"_s, u"crash1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"4"_s, u"--db"_s,
               fresh.urlText(), u"--redis"_s, u"redis://127.0.0.1:%1"_s.arg(redis.port()), u"--json"_s});
    QVERIFY(cli.waitForStarted());
    QElapsedTimer t;
    t.start();
    bool held = false;
    while (!held && t.elapsed() < 10000) {
        auto tokens = engine->gate()->openTokens(u"A"_s);
        held = tokens && !tokens->isEmpty();
        if (!held)
            QThread::msleep(20);
    }
    QVERIFY2(held, "the CLI never pre-deducted");
    QThread::msleep(200);
    QCOMPARE(cli.state(), QProcess::Running); // blocked in the book
    cli.kill();
    QVERIFY(cli.waitForFinished(5000));
    QVERIFY(rows.release());
    QCOMPARE(engine->gateLevels(u"A"_s).available, 6);

    Reconciler rec(*engine);
    const ReconcileReport report = passTwice(rec, 0);
    QCOMPARE(report.discrepancies.size(), 1);
    QCOMPARE(report.discrepancies.first().kind, DiscrepancyKind::OrphanPreDeduct);
    QCOMPARE(report.discrepancies.first().delta, 4);
    QCOMPARE(report.discrepancies.first().order, u"crash1"_s);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 10);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 10);
    // The killed attempt is fenced; the buyer's retry of the order reserves with a fresh token.
    auto retry = engine->reserve(u"crash1"_s, {}, {{u"A"_s, 4, {}}});
    FS_VERIFY_OK(retry);
    QCOMPARE(retry->outcome, Outcome::Reserved);
    QVERIFY(retry->lines.first().token != report.discrepancies.first().token);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 6);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 6);
}

void TestReconcile::checkAndPassFindTheSame_data()
{
    QTest::addColumn<QString>("backend");
    QTest::addColumn<bool>("windowed");
    QTest::addColumn<QString>("invariant");
    QTest::addColumn<bool>("bypassCheck");
    QTest::addColumn<QStringList>("statements");
    const QString bucket = u" WHERE sku = 'A'"_s;
    struct Way {
        const char *name;
        const char *invariant;
        bool bypassCheck;
        QStringList statements; // `@` is the ledger row of an ADJUST of -1 available, +1 locked
    };
    const QList<Way> ways{
        {"I1 levels do not sum to total", "I1", true, {u"UPDATE buckets SET available = available + 3"_s + bucket}},
        {"I1 a level below zero", "I1", true, {u"UPDATE buckets SET available = -1, total = locked + sold - 1"_s + bucket}},
        {"I2 bucket moved without its ledger", "I2", false,
         {u"UPDATE buckets SET available = available + 5, total = total + 5"_s + bucket}},
        {"I3 status without its ledger rows", "I3", false, {u"UPDATE orders SET status = 'PAID' WHERE order_id = 'o1'"_s}},
        {"I3 ledger row of no order line", "I3", false,
         {u"UPDATE ledger SET order_id = 'ghost' WHERE order_id = 'o2' AND operation = 'RELEASE'"_s}},
        {"I3 line quantity without its ledger rows", "I3", false,
         {u"UPDATE order_lines SET qty = 3 WHERE order_id = 'o1'"_s}},
        {"I4 an adjustment moved locked units", "I4", false,
         {u"UPDATE buckets SET available = available - 1, locked = locked + 1"_s + bucket, u"@"_s}},
        {"I5 gate below the book", "I5", false, {}},
        {"I6 payment of a closed order without refund", "I6", false,
         {u"UPDATE orders SET payment_ref = 'pay9' WHERE order_id = 'o2'"_s}},
        {"I6 refund of a payment the order can take", "I6", false,
         {u"UPDATE refunds SET order_id = 'o1' WHERE order_id = 'o2'"_s}},
    };
    for (const QString &backend : test::bookBackends())
        for (bool windowed : {false, true})
            for (const Way &w : ways)
                QTest::addRow("%s %s %s", qPrintable(backend), windowed ? "window" : "whole", w.name)
                    << backend << windowed << QString::fromLatin1(w.invariant) << w.bypassCheck << w.statements;
}

void TestReconcile::checkAndPassFindTheSame()
{
    // The drill's check (Book::check, and the gate against the book for I5) and one
    // reconcile pass find exactly the same broken invariants, at the same places, for each
    // way I1-I6 can break: over the whole ledger (a fresh book), and over a window (the
    // older trade folded into the checkpoints by an earlier pass).
    QFETCH(QString, backend);
    QFETCH(bool, windowed);
    QFETCH(QString, invariant);
    QFETCH(bool, bypassCheck);
    QFETCH(QStringList, statements);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    Reconciler rec(*engine);
    if (windowed) {
        rec.setWatermarkLagMs(0);
        QVERIFY(trade(*engine, u"old"_s));
        QThread::msleep(5); // the database clock moves past the old rows
        auto clean = rec.runPass(0);
        FS_VERIFY_OK(clean);
        QVERIFY(clean->discrepancies.isEmpty());
    }
    QVERIFY(trade(*engine, u"o"_s));
    FS_VERIFY_OK(adjustByHand(*engine, statements));
    if (invariant == u"I5"_s) {
        const qint64 below = FS_OK(engine->book().levels(u"A"_s)).available - 3;
        FS_VERIFY_OK(redis.command({"HSET", GateKeys::key(u"A"_s, "gate"), "available", QByteArray::number(below)}));
    }
    const QString problem = corruptBook(fresh, backend, bypassCheck, statements);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    auto check = engine->book().check();
    FS_VERIFY_OK(check);
    QSet<InvariantBreach> byDrill = check->breaches();
    const GateAgreement gate = checkGateAgreesWithBook(*engine, u"A"_s);
    if (!gate.holds)
        byDrill.insert(InvariantBreach::at(Invariant::I5, u"A"_s, -1, {}));
    auto pass = rec.runPass(0);
    FS_VERIFY_OK(pass);
    QSet<InvariantBreach> byPass;
    for (const Discrepancy &d : pass->discrepancies)
        for (const InvariantBreach &b : d.breaches())
            byPass.insert(b);
    // A disputed bucket keeps its gate where it was until the decision (no heal while
    // paused): I5 is compared where the gate alone was broken.
    if (invariant != u"I5"_s)
        byDrill.removeIf([](const InvariantBreach &b) { return b.invariant == Invariant::I5; });
    QVERIFY2(std::any_of(byDrill.cbegin(), byDrill.cend(),
                         [&](const InvariantBreach &b) { return invariantName(b.invariant) == invariant; }),
             qPrintable(u"the check missed %1: %2"_s.arg(invariant, breachesText(byDrill))));
    QVERIFY2(byDrill == byPass, qPrintable(u"check: %1 | pass: %2"_s.arg(breachesText(byDrill), breachesText(byPass))));
}

void TestReconcile::approvalLeavesTheGateAsRebuildWould()
{
    // After an approved correction the gate holds what `gate rebuild` gives: stock, pause,
    // sale and the per-user units (a gate that lost them while the SKU was paused gets them
    // back from the book, not only its stock).
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto sale = engine->createSale(u"A"_s, 0, 0, 120, 3);
    FS_VERIFY_OK(sale);
    FS_VERIFY_OK(engine->setSaleStatus(sale->id, SaleStatus::Open));
    QCOMPARE(FS_OK(engine->reserve(u"c1"_s, u"carol"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(engine->reserve(u"d1"_s, u"dave"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(engine->confirm(u"d1"_s, u"pay-d1"_s)).outcome, Outcome::Paid);
    FS_VERIFY_OK(engine->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
    Reconciler rec(*engine);
    auto found = rec.runPass(0);
    FS_VERIFY_OK(found);
    QCOMPARE(found->pendingApproval, 1);
    // While paused the gate drifts: its users' units are lost and its stock is wrong.
    FS_VERIFY_OK(redis.command({"HDEL", GateKeys::key(u"A"_s, "gate"), "u:carol", "u:dave"}));
    FS_VERIFY_OK(redis.command({"HSET", GateKeys::key(u"A"_s, "gate"), "available", "42"}));

    // Stock, pause, sale and users' units of the SKU's gate hash (not its counters or tokens).
    auto gateState = [&] {
        auto v = redis.command({"HGETALL", GateKeys::key(u"A"_s, "gate")});
        QStringList fields;
        for (qsizetype i = 0; v && i + 1 < v->elements.size(); i += 2) {
            const QString name = QString::fromUtf8(v->elements[i].str);
            if (name == u"available"_s || name == u"paused"_s || name.startsWith(u"sale_"_s) || name.startsWith(u"u:"_s))
                fields << name + u"="_s + QString::fromUtf8(v->elements[i + 1].str);
        }
        fields.sort();
        return fields.join(u" "_s);
    };
    auto approved = test::approveAsShown(rec, found->discrepancies.first().id, test::by(u"alice"_s), u"counted"_s, kApprovers);
    FS_VERIFY_OK(approved);
    QVERIFY2(engine->takeWarnings().isEmpty(), "the gate followed the decision without trouble");
    const QString afterApproval = gateState();
    FS_VERIFY_OK(engine->rebuildGate(u"A"_s));
    QCOMPARE(afterApproval, gateState());
    QVERIFY2(afterApproval.startsWith(u"available=7 "_s) && !afterApproval.contains(u"paused"_s)
                 && afterApproval.contains(u"sale_limit=3"_s) && afterApproval.endsWith(u" u:carol=2 u:dave=1"_s),
             qPrintable(afterApproval));
    QCOMPARE(FS_OK(engine->reserve(u"c2"_s, u"carol"_s, {{u"A"_s, 2, {}}})).outcome, Outcome::LimitExceeded);
    QCOMPARE(FS_OK(engine->reserve(u"c3"_s, u"carol"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
}

void TestReconcile::unknownOutcomeIsResolvedByItsProcess()
{
    // A reserve whose COMMIT answer is lost while the book is away (PostgreSQL stops taking
    // connections, the session is cut): the answer is outcome_unknown and its token stays
    // held, recorded as the process's own. Once the book is back the process resolves it
    // itself, no reconcile pass: too young for the safe grace, it waits; past it, the
    // attempt is fenced and its units go back to the gate.
    FS_GATED_ENGINE(u"postgresql"_s);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    auto buyer = test::openEngine(fresh.url(), redis.url());
    QVERIFY(buyer);
    UnknownOutcomes unknown;
    buyer->recordUnknownOutcomes(&unknown);
    const qint64 pid = FS_OK(buyer->database().exec(u"SELECT pg_backend_pid()"_s)).first().at(0).toLongLong();
    BookAwayAtCommit away(fresh.url(), pid);
    QVERIFY2(away.problem().isEmpty(), qPrintable(away.problem()));
    buyer->database().setWriteFaults(&away);
    const auto lost = buyer->reserve(u"u1"_s, {}, {{u"A"_s, 3, {}}});
    buyer->database().setWriteFaults(nullptr);
    QVERIFY(away.fired());
    QVERIFY2(away.problem().isEmpty(), qPrintable(away.problem()));
    QVERIFY(!lost);
    QCOMPARE(errorCodeName(lost.error().code), errorCodeName(ErrorCode::OutcomeUnknown));
    QCOMPARE(unknown.size(), 1);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 7);
    away.comeBack();
    QVERIFY2(away.problem().isEmpty(), qPrintable(away.problem()));

    Reconciler resolver(*engine);
    const QHash<QString, QStringList> held = unknown.take();
    ReconcileReport report;
    QCOMPARE(FS_OK(resolver.resolveTokens(u"A"_s, held.value(u"A"_s), Reconciler::minSafeGraceMs(), report)),
             held.value(u"A"_s));
    QCOMPARE(engine->gateLevels(u"A"_s).available, 7);
    QCOMPARE(FS_OK(resolver.resolveTokens(u"A"_s, held.value(u"A"_s), 0, report)), QStringList{});
    QCOMPARE(report.discrepancies.size(), 1);
    QCOMPARE(report.discrepancies.first().kind, DiscrepancyKind::OrphanPreDeduct);
    QCOMPARE(report.discrepancies.first().order, u"u1"_s);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 10);
    QCOMPARE(FS_OK(engine->book().orderStatus(u"u1"_s)), std::optional(OrderStatus::Abandoned));
    // The buyer's retry reserves afresh.
    auto retry = buyer->reserve(u"u1"_s, {}, {{u"A"_s, 3, {}}});
    FS_VERIFY_OK(retry);
    QCOMPARE(retry->outcome, Outcome::Reserved);
    QCOMPARE(engine->gateLevels(u"A"_s).available, 7);
    QVERIFY(test::bookHolds(*engine));
}

QTEST_GUILESS_MAIN(TestReconcile)
#include "tst_reconcile.moc"
#include "support/TestChecks.h"

void TestReconcile::batchesFindWhatOneStatementFinds_data()
{
    QTest::addColumn<QString>("backend");
    QTest::addColumn<bool>("windowed");
    for (const QString &backend : test::bookBackends())
        for (bool windowed : {false, true})
            QTest::addRow("%s %s", qPrintable(backend), windowed ? "window" : "whole") << backend << windowed;
}

void TestReconcile::batchesFindWhatOneStatementFinds()
{
    // A pass reads its window's order lines a batch at a time: with batches
    // of 4 lines it finds exactly what one statement over every line finds, never holding
    // more than 4 line rows, over the whole ledger and over a window after older trade.
    QFETCH(QString, backend);
    QFETCH(bool, windowed);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    for (const QString &sku : {u"A"_s, u"B"_s, u"C"_s})
        FS_VERIFY_OK(engine->addSku(sku, 100));
    Reconciler rec(*engine);
    rec.setWatermarkLagMs(0);
    if (windowed) {
        QVERIFY(trade(*engine, u"old"_s));
        QThread::msleep(5); // the database clock moves past the old rows
        auto clean = rec.runPass(0);
        FS_VERIFY_OK(clean);
        QVERIFY(clean->discrepancies.isEmpty());
    }
    // Lines in key order, 4 a batch: [b01 A, b02 A, b03 A, b04 A] [b04 B, b04 C, b05 A, b06 A]
    // [b07 A, b08 A, b09 A, b10 A] [b11 A, b11 B, b12 A]: b04 and b11 span a boundary.
    for (int i = 1; i <= 12; ++i) {
        const QString order = u"b%1"_s.arg(i, 2, 10, QLatin1Char('0'));
        QList<OrderLine> lines{{u"A"_s, 1, {}}};
        if (i == 4)
            lines << OrderLine{u"B"_s, 1, {}} << OrderLine{u"C"_s, 2, {}};
        if (i == 11)
            lines << OrderLine{u"B"_s, 1, {}};
        QCOMPARE(FS_OK(engine->reserve(order, {}, lines)).outcome, Outcome::Reserved);
        if (i % 3 == 0)
            QCOMPARE(FS_OK(engine->confirm(order, u"pay-"_s + order)).outcome, Outcome::Paid);
        else if (i % 3 == 1 && i != 1 && i != 4)
            QCOMPARE(FS_OK(engine->release(order, u"cancel"_s)).outcome, Outcome::Released);
    }
    const QString problem = corruptBook(
        fresh, backend, false,
        {// the first line of the first batch: PAID without its CONFIRM
         u"UPDATE orders SET status = 'PAID' WHERE order_id = 'b01'"_s,
         // the last line of the first batch: its RESERVE moved to no line (and a stray row)
         u"UPDATE ledger SET order_id = 'ghost' WHERE order_id = 'b04' AND sku = 'A'"_s,
         // in the second batch, of the order split across the boundary: qty not its rows'
         u"UPDATE order_lines SET qty = 3 WHERE order_id = 'b04' AND sku = 'C'"_s,
         // a middle batch: CLOSED without its RELEASE
         u"UPDATE orders SET status = 'CLOSED' WHERE order_id = 'b08'"_s,
         // the last line of the last batch
         u"UPDATE orders SET status = 'PENDING' WHERE order_id = 'b12'"_s});
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    auto window = LedgerWatermark(engine->database()).window();
    FS_VERIFY_OK(window);
    QCOMPARE(window->isWhole(), !windowed);

    auto one = checkInvariants(engine->database(), *window, 1000);
    FS_VERIFY_OK(one);
    QCOMPARE(one->scan.batches, 1);
    QCOMPARE(one->scan.lines, 15); // the window's: none of the older trade
    QStringList lineOrders;
    for (const OrderLineFinding &l : one->lines)
        lineOrders << l.order + u' ' + l.sku;
    QCOMPARE(lineOrders, (QStringList{u"b01 A"_s, u"b04 A"_s, u"b04 C"_s, u"b08 A"_s, u"b12 A"_s}));
    QCOMPARE(one->strayRows.size(), 1);

    // The same findings (a window is taken in ledger id ranges, so their order may differ),
    // every line read once, never more than the batch held.
    auto sorted = [](QStringList list) {
        list.sort();
        return list;
    };
    auto batched = checkInvariants(engine->database(), *window, 4);
    FS_VERIFY_OK(batched);
    QCOMPARE(sorted(batched->problems()), sorted(one->problems()));
    QCOMPARE(batched->breaches(), one->breaches());
    QCOMPARE(batched->scan.lines, 15);
    if (!windowed) {
        QCOMPARE(batched->scan.batches, 4);
        QCOMPARE(batched->scan.mostHeld, 4);
    }
    QVERIFY(batched->scan.batches > 1);
    QVERIFY(batched->scan.mostHeld <= 4);
    for (int size : {1, 2, 3, 5, 14, 15, 16}) {
        auto other = checkInvariants(engine->database(), *window, size);
        FS_VERIFY_OK(other);
        QCOMPARE(sorted(other->problems()), sorted(one->problems()));
        QCOMPARE(other->scan.lines, 15);
        QVERIFY(other->scan.mostHeld <= size);
    }
    QCOMPARE(checkInvariants(engine->database(), *window, 0).error().code, ErrorCode::InvalidArgument);

    // A pass in batches of 4 records what one statement finds, holding at most 4 lines.
    rec.setLinesPerBatch(4);
    auto pass = rec.runPass(0);
    FS_VERIFY_OK(pass);
    QVERIFY(pass->lines.mostHeld > 0 && pass->lines.mostHeld <= 4);
    QCOMPARE(pass->lines.lines, 15);
    QSet<InvariantBreach> byPass;
    for (const Discrepancy &d : pass->discrepancies)
        for (const InvariantBreach &b : d.breaches())
            byPass.insert(b);
    QVERIFY2(byPass == one->breaches(),
             qPrintable(u"check: %1 | pass: %2"_s.arg(breachesText(one->breaches()), breachesText(byPass))));
}

void TestReconcile::approvalAppliesWhatTheApproverSaw()
{
    // A stocktake of 6 units proposed (after the restore was rejected); 2 000 units appear in
    // the bucket before the approval. The approval of what was shown changes nothing and
    // says why; the next pass brings the proposal up to date, and that one is applied
    // exactly, the four-eyes rule counted on what it applies.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    ApproverStore approvers(engine->database());
    FS_VERIFY_OK(approvers.policy(kApprovers));
    FS_VERIFY_OK(approvers.add(u"bob"_s, u"alice"_s));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available - 4, total = total - 4 WHERE sku = 'A'"_s));
    Reconciler rec(*engine);
    auto found = rec.runPass(0);
    QVERIFY(found && found->pendingApproval == 1);
    const qint64 id = found->discrepancies.first().id;
    const Discrepancy shown = FS_OK(rec.reject(id, test::by(u"alice"_s), u"recount first"_s, kApprovers));
    QCOMPARE(shown.correction, Correction(AcceptStocktake{Levels3{6, 0, 0}, Levels3{10, 0, 0}}));
    QCOMPARE(correctionUnits(shown), 4);
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available + 2000, total = total + 2000 WHERE sku = 'A'"_s));
    const qint64 ledgerBefore = FS_OK(engine->book().ledgerCount());

    auto moved = rec.approve(id, shown.correction, test::by(u"alice"_s), u"counted 6"_s, kApprovers);
    QVERIFY(!moved);
    QCOMPARE(moved.error().code, ErrorCode::InvalidArgument);
    QCOMPARE(moved.error().field, u"seen"_s);
    QVERIFY2(moved.error().message.contains(u"the SKU moved; reconcile and decide again"_s), qPrintable(moved.error().message));
    QCOMPARE(FS_OK(engine->book().ledgerCount()), ledgerBefore);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 2006);
    const Discrepancy unchanged = FS_OK(rec.get(id));
    QCOMPARE(unchanged.status, DiscrepancyStatus::PendingApproval);
    QCOMPARE(unchanged.decisions.size(), 1); // the rejection only

    // Reconcile: the same discrepancy (no new id) proposes the stocktake of what is there now.
    auto again = rec.runPass(0);
    FS_VERIFY_OK(again);
    QVERIFY(again->discrepancies.isEmpty());
    QCOMPARE(again->stillPending, 1);
    const Discrepancy now = FS_OK(rec.get(id));
    QCOMPARE(now.correction, Correction(AcceptStocktake{Levels3{2006, 0, 0}, Levels3{10, 0, 0}}));
    QVERIFY(now.fingerprint() != shown.fingerprint());
    QCOMPARE(correctionUnits(now), 1996);
    auto stale = rec.approve(id, shown.correction, test::by(u"alice"_s), u"counted 6"_s, kApprovers);
    QVERIFY(!stale);
    QCOMPARE(stale.error().field, u"seen"_s);

    // 1 996 units: above the four-eyes limit of 100.
    const Discrepancy first = FS_OK(rec.approve(id, now.correction, test::by(u"alice"_s), u"counted 2006"_s, kApprovers));
    QVERIFY(first.awaitsSecondApprover());
    QCOMPARE(FS_OK(engine->book().ledgerCount()), ledgerBefore);
    const Discrepancy applied =
        FS_OK(rec.approve(id, now.correction, test::byAt(u"bob"_s, u"bobs-laptop"_s), u"agreed"_s, kApprovers));
    QCOMPARE(applied.status, DiscrepancyStatus::Approved);
    QCOMPARE(FS_OK(engine->book().ledgerCount()), ledgerBefore + 1);
    const LedgerRow adjust = FS_OK(engine->book().ledgerOfSku(u"A"_s)).last();
    QCOMPARE(adjust.adjustmentKind, u"stocktake"_s);
    QCOMPARE(adjust.adjustmentUnits, 1996);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 2006);
    QVERIFY(test::bookHolds(*engine));
}

void TestReconcile::everyPauseHasAWayOut_data()
{
    QTest::addColumn<QString>("backend");
    QTest::addColumn<QString>("trade");
    QTest::addColumn<bool>("bypassCheck");
    QTest::addColumn<QStringList>("statements");
    const QString bucket = u" WHERE sku = 'A'"_s;
    struct Way {
        const char *name;
        const char *trade; // "", "pending" (o1 holds 2) or "paid" (o1 bought 2)
        bool bypassCheck;
        QStringList statements; // `@` is the ledger row of an ADJUST of -1 available, +1 locked
    };
    const QList<Way> ways{
        {"ledger mismatch in available", "pending", false,
         {u"UPDATE buckets SET available = available + 5, total = total + 5"_s + bucket}},
        {"ledger mismatch in locked", "pending", false,
         {u"UPDATE buckets SET available = available - 3, locked = locked + 3"_s + bucket}},
        {"ledger mismatch in sold", "paid", false,
         {u"UPDATE buckets SET available = available - 3, sold = sold + 3"_s + bucket}},
        {"broken bucket", "pending", true, {u"UPDATE buckets SET available = -1, total = locked + sold - 1"_s + bucket}},
        {"order status without its ledger rows", "pending", false,
         {u"UPDATE orders SET status = 'CLOSED' WHERE order_id = 'o1'"_s}},
        {"an adjustment moved locked units", "pending", false,
         {u"UPDATE buckets SET available = available - 1, locked = locked + 1"_s + bucket, u"@"_s}},
    };
    for (const QString &backend : test::bookBackends())
        for (const Way &w : ways)
            QTest::addRow("%s %s", qPrintable(backend), w.name)
                << backend << QString::fromLatin1(w.trade) << w.bypassCheck << w.statements;
}

void TestReconcile::everyPauseHasAWayOut()
{
    // Every discrepancy that pauses its SKU, rejected and then approved, leaves the SKU
    // selling and I1-I6 holding, without a statement typed by hand.
    QFETCH(QString, backend);
    QFETCH(QString, trade);
    QFETCH(bool, bypassCheck);
    QFETCH(QStringList, statements);
    FS_GATED_ENGINE(backend);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, {}, {{u"A"_s, 2, {}}})).outcome, Outcome::Reserved);
    if (trade == u"paid"_s)
        QCOMPARE(FS_OK(engine->confirm(u"o1"_s, u"pay1"_s)).outcome, Outcome::Paid);
    FS_VERIFY_OK(adjustByHand(*engine, statements));
    const QString problem = corruptBook(fresh, backend, bypassCheck, statements);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    Reconciler rec(*engine);
    auto found = rec.runPass(0);
    FS_VERIFY_OK(found);
    QCOMPARE(found->pendingApproval, 1);
    const Discrepancy d = found->discrepancies.first();
    QVERIFY2(d.correction != Correction(std::monostate{}), qPrintable(d.proposal));
    QCOMPARE(FS_OK(engine->reserve(u"p1"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Paused);
    // Found again unchanged: the waiting discrepancy stays as it is.
    auto same = rec.runPass(0);
    QVERIFY(same && same->discrepancies.isEmpty());
    QCOMPARE(FS_OK(rec.get(d.id)).detail, d.detail);

    const Discrepancy rejected = FS_OK(rec.reject(d.id, test::by(u"alice"_s), u"not that"_s, kApprovers));
    QCOMPARE(rejected.status, DiscrepancyStatus::PendingApproval);
    QVERIFY2(rejected.correction != Correction(std::monostate{}), qPrintable(rejected.proposal));
    // Never a locked or sold figure the orders (o1's 2 units) contradict.
    const qint64 heldLocked = trade == u"pending"_s ? 2 : 0, heldSold = trade == u"paid"_s ? 2 : 0;
    for (const Discrepancy &proposed : {d, rejected})
        if (const auto seen = bucketSeen(proposed.correction))
            QVERIFY2(seen->target.locked == heldLocked && seen->target.sold == heldSold, qPrintable(proposed.proposal));
    QCOMPARE(FS_OK(engine->reserve(u"p2"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Paused);
    const Discrepancy approved = FS_OK(rec.approve(d.id, rejected.correction, test::by(u"alice"_s), u"counted"_s, kApprovers));
    QCOMPARE(approved.status, DiscrepancyStatus::Approved);

    auto after = rec.runPass(0);
    FS_VERIFY_OK(after);
    for (const Discrepancy &n : after->discrepancies)
        qWarning("found after the approval: %s", qPrintable(n.detail));
    QVERIFY(after->discrepancies.isEmpty());
    QCOMPARE(after->stillPending, 0);
    QVERIFY(test::bookHolds(*engine));
    QCOMPARE(FS_OK(engine->reserve(u"p3"_s, {}, {{u"A"_s, 1, {}}})).outcome, Outcome::Reserved);
}

void TestReconcile::fourEyesAreTwoPeople()
{
    // The two halves of a four-eyes approval from one person are refused: another name
    // asserted from the same OS user, host and database role, or the same name from
    // elsewhere. From another machine, or (PostgreSQL) under another database role, the
    // second approval applies it.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 1000));
    ApproverStore approvers(engine->database());
    FS_VERIFY_OK(approvers.policy(kApprovers));
    FS_VERIFY_OK(approvers.add(u"bob"_s, u"alice"_s));
    Reconciler rec(*engine);
    const auto drift = [&]() -> Discrepancy {
        if (!engine->database().exec(u"UPDATE buckets SET available = 850, total = 850 WHERE sku = 'A'"_s))
            return {};
        auto report = rec.runPass(0);
        return report && report->pendingApproval == 1 ? report->discrepancies.first() : Discrepancy{};
    };
    const Discrepancy d = drift();
    QCOMPARE(correctionUnits(d), 150);
    QVERIFY(FS_OK(rec.approve(d.id, d.correction, test::by(u"alice"_s), u"counted 850"_s, kApprovers)).awaitsSecondApprover());
    for (const DecisionBy &one : {test::by(u"bob"_s), test::byAt(u"alice"_s, u"elsewhere"_s)}) {
        auto refused = rec.approve(d.id, d.correction, one, u"agreed"_s, kApprovers);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::NotPermitted);
        QCOMPARE(refused.error().field, u"operator"_s);
        QVERIFY2(refused.error().message.contains(u"four eyes are two people"_s), qPrintable(refused.error().message));
    }
    QCOMPARE(FS_OK(rec.get(d.id)).decisions.size(), 1);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 850);
    const Discrepancy done =
        FS_OK(rec.approve(d.id, d.correction, test::byAt(u"bob"_s, u"bobs-laptop"_s), u"agreed"_s, kApprovers));
    QCOMPARE(done.status, DiscrepancyStatus::Approved);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 1000);
    if (backend != u"postgresql"_s)
        return;

    // The same OS user and host, connected as another database role: another person.
    const QString role = u"bob_"_s + fresh.url().database;
    const QString made = corruptBook(fresh, backend, false, {u"CREATE ROLE %1 LOGIN SUPERUSER PASSWORD 'bob-secret'"_s.arg(role)});
    QVERIFY2(made.isEmpty(), qPrintable(made));
    DbUrl asBob = fresh.url();
    asBob.user = role;
    asBob.password = u"bob-secret"_s;
    auto bobsEngine = test::openEngine(asBob);
    QVERIFY(bobsEngine);
    Reconciler bobs(*bobsEngine);
    const Discrepancy next = drift();
    QVERIFY(FS_OK(rec.approve(next.id, next.correction, test::by(u"alice"_s), u"counted"_s, kApprovers)).awaitsSecondApprover());
    const Discrepancy byRole = FS_OK(bobs.approve(next.id, next.correction, test::by(u"bob"_s), u"agreed"_s, kApprovers));
    QCOMPARE(byRole.status, DiscrepancyStatus::Approved);
    QCOMPARE(byRole.decisions.at(1).dbRole, role);
    QCOMPARE(FS_OK(engine->book().levels(u"A"_s)).available, 1000);
}

void TestReconcile::passesSpendIdsOnlyOnNewDiscrepancies()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 10));
    FS_VERIFY_OK(engine->addSku(u"B"_s, 10));
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available + 1, total = total + 1 WHERE sku = 'A'"_s));
    Reconciler rec(*engine);
    auto first = rec.runPass(0);
    QVERIFY(first && first->pendingApproval == 1);
    for (int pass = 0; pass < 3; ++pass) {
        auto quiet = rec.runPass(0);
        QVERIFY(quiet && quiet->discrepancies.isEmpty());
    }
    QVERIFY(engine->database().exec(u"UPDATE buckets SET available = available + 1, total = total + 1 WHERE sku = 'B'"_s));
    auto next = rec.runPass(0);
    QVERIFY(next && next->pendingApproval == 1);
    QCOMPARE(next->discrepancies.first().id, first->discrepancies.first().id + 1);
}
