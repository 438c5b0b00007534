// The rehearsal drill (core/drill): every fault kind on, on both book backends, a real
// (embedded, restartable) redis-server; the broken engine it must catch; the schedule's
// determinism; option validation through the CLI.

#include "Cli.h"
#include "Engine.h"
#include "drill/Drill.h"
#include "drill/DrillChannel.h"
#include "gate/EmbeddedRedis.h"
#include "gate/Gate.h"
#include "store/Database.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <mutex>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// The short (CI) drill: 600 buyers for 100 units, 8 workers, 1 s holds.
DrillOptions shortDrill(quint64 seed)
{
    DrillOptions o;
    o.sku = u"drill-%1"_s.arg(seed);
    o.stock = 100;
    o.buyers = 600;
    o.concurrency = 8;
    o.payRatio = 0.7;
    o.holdSeconds = 1;
    o.faults = FS_OK(parseFaults(u"all"_s));
    o.seed = seed;
    return o;
}

/// Stops the embedded redis-server of a temporary data dir when the test ends.
struct EmbeddedGuard {
    QString dir;
    ~EmbeddedGuard() { (void)EmbeddedRedis(dir).stop(); }
};

/// A drill --via channel on its own engine whose payment callbacks lose their answer, as
/// across a server kill: the callback is applied, its answer lost, and it is sent again;
/// the second send's answer comes back, marked resent. `loseFirst`: an order's first
/// callback too, else only the ones after it (a duplicate callback's copies).
class LosingChannel final : public DrillChannel {
public:
    struct Seen {
        std::mutex mutex;
        QSet<QString> orders;
    };
    LosingChannel(std::unique_ptr<Engine> engine, bool loseFirst, std::shared_ptr<Seen> seen)
        : m_engine(std::move(engine))
        , m_loseFirst(loseFirst)
        , m_seen(std::move(seen))
    {
    }
    Result<Outcome> reserve(const QString &order, const QString &user, const QString &sku, qint64 qty,
                            qint64 holdSeconds) override
    {
        auto r = m_engine->reserve(order, user, {OrderLine{sku, qty, {}}}, holdSeconds);
        if (!r)
            return std::unexpected(r.error());
        return r->outcome;
    }
    Result<PaymentAnswer> confirm(const QString &order, const QString &payment) override
    {
        bool later = false;
        {
            std::lock_guard lock(m_seen->mutex);
            later = m_seen->orders.contains(order);
            m_seen->orders.insert(order);
        }
        const bool lose = later || m_loseFirst;
        if (lose)
            (void)m_engine->confirm(order, payment); // applied; its answer never arrives
        auto c = m_engine->confirm(order, payment);
        if (!c)
            return std::unexpected(c.error());
        return PaymentAnswer{c->outcome, lose};
    }

private:
    std::unique_ptr<Engine> m_engine;
    bool m_loseFirst;
    std::shared_ptr<Seen> m_seen;
};

} // namespace

class TestDrill : public QObject {
    Q_OBJECT

private slots:
    void sameSeedSameSchedule();
    void onceFiresExactlyOnce();
    void allFaultsHoldEveryInvariant_data();
    void allFaultsHoldEveryInvariant();
    void brokenEngineFails();
    void otherSkusDriftDoesNotFailTheDrill();
    void cancelWindsDownConsistently();
    void lostPaymentAnswersAreResolved_data();
    void lostPaymentAnswersAreResolved();
    void cliRejectsBadOptions_data();
    void cliRejectsBadOptions();
};

void TestDrill::onceFiresExactlyOnce()
{
    // NAME=once: one event per gate-wide kind, one buyer per per-buyer kind, whatever the
    // seed; between 10% and 50% of the buyers for the gate-wide ones.
    const FaultSpec spec = FS_OK(parseFaults(u"script-flush=once, lost-callback=once,redis-restart=0.5"_s));
    QCOMPARE(spec.once, (QSet<FaultKind>{FaultKind::ScriptFlush, FaultKind::LostCallback}));
    QVERIFY(spec.mustFire(FaultKind::ScriptFlush) && !spec.mustFire(FaultKind::RedisRestart));
    for (quint64 seed = 1; seed <= 20; ++seed) {
        DrillOptions o = shortDrill(seed);
        o.redis = RedisUrl::unixSocket(u"/nowhere/redis.sock"_s);
        o.faults = spec;
        const DrillSchedule s = DrillSchedule::build(o);
        QCOMPARE(s.scheduled.value(FaultKind::ScriptFlush), 1);
        QCOMPARE(s.scheduled.value(FaultKind::LostCallback), 1);
        QVERIFY(s.scheduled.value(FaultKind::RedisRestart) > 1);
        for (const GlobalEvent &e : s.events)
            if (e.kind == FaultKind::ScriptFlush)
                QVERIFY2(e.beforeBuyer >= o.buyers / 10 && e.beforeBuyer < o.buyers / 2, qPrintable(QString::number(e.beforeBuyer)));
    }
    const auto bad = parseFaults(u"script-flush=twice"_s);
    QVERIFY(!bad);
    QCOMPARE(bad.error().field, u"faults"_s);
}

void TestDrill::sameSeedSameSchedule()
{
    DrillOptions a = shortDrill(7);
    a.redis = RedisUrl::unixSocket(u"/nowhere/redis.sock"_s);
    DrillOptions b = a;
    const DrillSchedule first = DrillSchedule::build(a);
    const DrillSchedule second = Drill(b).schedule();
    QVERIFY(first == second);
    QCOMPARE(first.digest(), second.digest());
    // `all` fires every kind at least once, per-buyer kinds on buyers that still find stock;
    // node-failover only on a Redis Cluster, server-kill only through a server (--via),
    // book-failover and standby-loss only on a formation (--formation).
    const auto outside = [](FaultKind k) {
        return k == FaultKind::NodeFailover || k == FaultKind::ServerKill || isFormationFault(k);
    };
    for (FaultKind k : allFaultKinds())
        QVERIFY2(first.scheduled.value(k) >= (outside(k) ? 0 : 1), qPrintable(faultName(k)));
    for (FaultKind k : allFaultKinds())
        if (outside(k))
            QCOMPARE(first.scheduled.value(k), 0);
    DrillOptions onCluster = a;
    onCluster.redis = RedisUrl::cluster({{u"127.0.0.1"_s, 7000}});
    QCOMPARE(DrillSchedule::build(onCluster).scheduled.value(FaultKind::NodeFailover), 1);
    b.seed = 8;
    const DrillSchedule other = DrillSchedule::build(b);
    QVERIFY(!(first == other));
    QVERIFY(first.digest() != other.digest());
    // Book-only: the kinds that need a gate are left out of the schedule.
    a.redis.reset();
    for (FaultKind k : {FaultKind::CrashAfterGate, FaultKind::RedisRestart, FaultKind::ScriptFlush,
                        FaultKind::NodeFailover})
        QCOMPARE(DrillSchedule::build(a).scheduled.value(k), 0);
}

void TestDrill::lostPaymentAnswersAreResolved_data()
{
    QTest::addColumn<bool>("loseFirst");
    QTest::newRow("copies lose their answers") << false;
    QTest::newRow("every callback loses its answer") << true;
}

void TestDrill::lostPaymentAnswersAreResolved()
{
    // A duplicate callback's copy sent again after its answer was lost (drill --via across a
    // server kill) and answered `duplicate` is not a second `paid`: another copy was
    // answered paid. (Taken as paid, as drill --via did, the fault stayed unhealed and
    // paid_units counted it twice.) When no copy was answered paid, the lost answer was
    // the paid one; a lone callback sent again and answered `duplicate` paid its order.
    QFETCH(bool, loseFirst);
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    QTemporaryDir dataDir;
    QVERIFY(dataDir.isValid());
    EmbeddedGuard guard{dataDir.path()};
    auto url = EmbeddedRedis(dataDir.path()).start();
    QVERIFY2(url, url ? "" : qPrintable(url.error().message));

    DrillOptions o = shortDrill(17);
    o.buyers = 100;
    o.stock = 40;
    o.faults = FS_OK(parseFaults(u"duplicate-callback=0.2"_s));
    o.db = fresh.url();
    o.redis = *url;
    o.embeddedDataDir = dataDir.path();
    o.via = DrillVia{};
    o.via->url = u"losing"_s;
    auto seen = std::make_shared<LosingChannel::Seen>();
    o.via->channels = [&o, loseFirst, seen]() -> Result<std::unique_ptr<DrillChannel>> {
        auto engine = Engine::open(EngineOptions{o.db, o.redis, Actor{o.operatorName, u"drill"_s}});
        if (!engine)
            return std::unexpected(engine.error());
        return std::unique_ptr<DrillChannel>(std::make_unique<LosingChannel>(std::move(*engine), loseFirst, seen));
    };
    auto report = Drill(o).run();
    QVERIFY2(report, report ? "" : qPrintable(report.error().message));
    const QString text = report->toText();
    const FaultTally t = report->faults.value(FaultKind::DuplicateCallback);
    QVERIFY2(t.injected >= 1, qPrintable(text));
    QVERIFY2(t.healed == t.injected, qPrintable(text));
    QVERIFY2(report->paymentOutcomes.value(u"duplicate_resent"_s) >= 1, qPrintable(text));
    QCOMPARE(report->paidUnits, report->sold); // each order paid once, counted once
    QVERIFY2(report->passed(), qPrintable(text));
}

void TestDrill::allFaultsHoldEveryInvariant_data()
{
    QTest::addColumn<QString>("backend");
    QTest::addColumn<quint64>("seed");
    for (const QString &b : test::bookBackends())
        for (quint64 seed : {1ULL, 2ULL, 3ULL})
            QTest::addRow("%s seed %llu", qPrintable(b), seed) << b << seed;
}

void TestDrill::allFaultsHoldEveryInvariant()
{
    QFETCH(QString, backend);
    QFETCH(quint64, seed);
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    FS_FRESH_BOOK(fresh, backend);
    QTemporaryDir dataDir;
    QVERIFY(dataDir.isValid());
    EmbeddedGuard guard{dataDir.path()};
    auto url = EmbeddedRedis(dataDir.path()).start();
    QVERIFY2(url, url ? "" : qPrintable(url.error().message));

    DrillOptions o = shortDrill(seed);
    o.db = fresh.url();
    o.redis = *url;
    o.embeddedDataDir = dataDir.path();
    auto report = Drill(o).run();
    QVERIFY2(report, report ? "" : qPrintable(report.error().message));
    const QString text = report->toText();
    QVERIFY2(report->passed(), qPrintable(text));
    QVERIFY2(report->invariantsHold(), qPrintable(text));
    QCOMPARE(report->oversold, 0);
    QCOMPARE(report->stuck, 0);
    for (FaultKind k : allFaultKinds()) {
        // A single redis-server, no server and no formation: left out, and the report says so.
        if (k == FaultKind::NodeFailover || k == FaultKind::ServerKill || isFormationFault(k))
            continue;
        const FaultTally t = report->faults.value(k);
        QVERIFY2(t.injected >= 1, qPrintable(faultName(k) + u" never fired\n"_s + text));
        QVERIFY2(t.healed == t.injected, qPrintable(faultName(k) + u" not healed\n"_s + text));
    }
    QVERIFY(!report->faults.contains(FaultKind::NodeFailover));
    QVERIFY2(text.contains(u"node-failover left out: it needs a Redis Cluster gate"_s), qPrintable(text));
    QVERIFY2(text.contains(u"server-kill left out: it needs a running server (drill --via URL)"_s), qPrintable(text));
    QVERIFY2(text.contains(u"book-failover left out: it needs a formation"_s), qPrintable(text));

    // The book and the gate agree with the report (what `sku show` and `ledger` print).
    auto engine = Engine::open(EngineOptions{fresh.url(), *url, Actor{u"tester"_s, u"test"_s}});
    FS_VERIFY_OK(engine);
    auto levels = (*engine)->book().levels(o.sku);
    FS_VERIFY_OK(levels);
    QCOMPARE(levels->sold, report->sold);
    QCOMPARE(levels->sold, report->paidUnits);
    QCOMPARE(levels->locked, 0);
    QCOMPARE(levels->total, o.stock);
    QCOMPARE((*engine)->gateLevels(o.sku).available, levels->available);
    auto ledger = (*engine)->book().ledgerOfSku(o.sku);
    FS_VERIFY_OK(ledger);
    qint64 confirmed = 0, reserved = 0, released = 0;
    for (const LedgerRow &row : *ledger) {
        confirmed += row.operation == u"CONFIRM"_s ? row.deltaSold : 0;
        reserved += row.operation == u"RESERVE"_s ? row.deltaLocked : 0;
        released += row.operation == u"RELEASE"_s ? row.deltaAvailable : 0;
    }
    QCOMPARE(confirmed, report->paidUnits);
    QCOMPARE(reserved, report->reservedUnits);
    QCOMPARE(reserved, confirmed + released);
    const QJsonObject json = report->toJson();
    for (const char *key : {"sold", "paid_units", "oversold", "stuck", "invariants", "throughput_per_s",
                            "latency_ms", "faults"})
        QVERIFY2(json.contains(QLatin1String(key)), key);
    QCOMPARE(json.value(u"invariants"_s).toObject().size(), 6);
}

void TestDrill::cancelWindsDownConsistently()
{
    // A long book-only drill cancelled after its first progress: it stops taking buyers,
    // winds down (holds expire, the reconciler runs) and reports cancelled, never passed,
    // with every invariant of the book it leaves behind holding.
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    DrillOptions o = shortDrill(5);
    o.sku = u"cancelled"_s;
    o.buyers = 5'000'000;
    o.faults = {};
    o.db = fresh.url();
    QElapsedTimer clock;
    clock.start();
    o.cancelled = [&clock] { return clock.elapsed() > 500; };
    auto report = Drill(o).run();
    QVERIFY2(report, report ? "" : qPrintable(report.error().message));
    QVERIFY(report->cancelled);
    QVERIFY(!report->passed());
    QVERIFY2(report->invariantsHold(), qPrintable(report->toText()));
    QCOMPARE(report->oversold, 0);
    QCOMPARE(report->stuck, 0);
    QVERIFY(report->toText().contains(u"CANCELLED"_s));
    QVERIFY(report->toJson().value(u"cancelled"_s).toBool());
    QVERIFY2(clock.elapsed() < 60000, "a cancelled drill does not serve its remaining buyers");
}

void TestDrill::brokenEngineFails()
{
    // The read-check-write book (NaiveReserve as the book's line taker), book-only so that nothing
    // but the book guards the stock: the drill must see the oversell and fail.
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    DrillOptions o = shortDrill(11);
    o.sku = u"broken"_s;
    o.stock = 50;
    // Every reservation pays, so each lost update is a unit sold that does not exist (with
    // some buyers abandoning, a few lost updates could hide below the stock); more buyers and
    // clients than the other drills make lost updates certain rather than likely.
    o.payRatio = 1.0;
    o.buyers = 1000;
    o.concurrency = 16;
    o.faults = {};
    o.db = fresh.url();
    o.naiveBookForTesting = true;
    auto report = Drill(o).run();
    QVERIFY2(report, report ? "" : qPrintable(report.error().message));
    QVERIFY2(report->oversold > 0, qPrintable(report->toText()));
    QVERIFY(!report->invariantsHold());
    QVERIFY(!report->passed());
    QVERIFY(!report->check.holds(Invariant::I1) || !report->check.holds(Invariant::I2));

    // The same drill on the correct book passes: the failure above is the broken engine's.
    FS_FRESH_BOOK(good, u"sqlite"_s);
    o.db = good.url();
    o.naiveBookForTesting = false;
    auto fine = Drill(o).run();
    FS_VERIFY_OK(fine);
    QVERIFY2(fine->passed(), qPrintable(fine->toText()));
    QCOMPARE(fine->oversold, 0);
}

void TestDrill::otherSkusDriftDoesNotFailTheDrill()
{
    // The book holds an unrelated SKU whose bucket disagrees with its ledger: the rehearsal
    // answers for its own SKU only.
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    {
        auto engine = test::openEngine(fresh.url());
        QVERIFY(engine);
        FS_VERIFY_OK(engine->addSku(u"other"_s, 10));
        FS_VERIFY_OK(engine->database().exec(u"UPDATE buckets SET available = 9, total = 9 WHERE sku = 'other'"_s));
    }
    DrillOptions o = shortDrill(13);
    o.stock = 20;
    o.buyers = 60;
    o.faults = {};
    o.db = fresh.url();
    auto report = Drill(o).run();
    FS_VERIFY_OK(report);
    QVERIFY2(report->passed(), qPrintable(report->toText()));
}

void TestDrill::cliRejectsBadOptions_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("field");
    QTest::addRow("buyers 0") << QStringList{u"--buyers"_s, u"0"_s} << u"buyers"_s;
    QTest::addRow("stock text") << QStringList{u"--stock"_s, u"many"_s} << u"stock"_s;
    QTest::addRow("concurrency") << QStringList{u"--concurrency"_s, u"999"_s} << u"concurrency"_s;
    QTest::addRow("pay ratio") << QStringList{u"--pay-ratio"_s, u"1.5"_s} << u"pay-ratio"_s;
    QTest::addRow("hold") << QStringList{u"--hold-seconds"_s, u"0"_s} << u"hold-seconds"_s;
    QTest::addRow("fault name") << QStringList{u"--faults"_s, u"meteor"_s} << u"faults"_s;
    QTest::addRow("fault rate") << QStringList{u"--faults"_s, u"db-error=2"_s} << u"faults"_s;
    QTest::addRow("seed") << QStringList{u"--seed"_s, u"-1"_s} << u"seed"_s;
    QTest::addRow("sku") << QStringList{u"--sku"_s, u"a:b"_s} << u"sku"_s;
    QTest::addRow("gate fault book-only")
        << QStringList{u"--faults"_s, u"script-flush"_s, u"--redis"_s, u"none"_s} << u"faults"_s;
    QTest::addRow("node-failover on one server")
        << QStringList{u"--faults"_s, u"node-failover"_s, u"--redis"_s, u"redis://127.0.0.1:1"_s} << u"faults"_s;
    QTest::addRow("server-kill in process") << QStringList{u"--faults"_s, u"server-kill"_s} << u"faults"_s;
    QTest::addRow("via not http") << QStringList{u"--via"_s, u"ftp://127.0.0.1:8080"_s} << u"via"_s;
    QTest::addRow("inside fault via")
        << QStringList{u"--via"_s, u"http://127.0.0.1:1"_s, u"--faults"_s, u"db-error"_s} << u"faults"_s;
    QTest::addRow("server-kill without pid file")
        << QStringList{u"--via"_s, u"http://127.0.0.1:1"_s, u"--faults"_s, u"server-kill"_s} << u"faults"_s;
    QTest::addRow("server-command alone")
        << QStringList{u"--via"_s, u"http://127.0.0.1:1"_s, u"--server-command"_s, u"true"_s} << u"server-command"_s;
    QTest::addRow("token-file without via") << QStringList{u"--token-file"_s, u"/dev/null"_s} << u"token-file"_s;
    QTest::addRow("book-failover without formation")
        << QStringList{u"--via"_s, u"http://127.0.0.1:1"_s, u"--faults"_s, u"book-failover=once"_s} << u"faults"_s;
    QTest::addRow("formation without via") << QStringList{u"--formation"_s, u"/dev/null"_s} << u"formation"_s;
    QTest::addRow("formation and pid file")
        << QStringList{u"--via"_s, u"http://127.0.0.1:1"_s, u"--formation"_s, u"/dev/null"_s, u"--server-pid-file"_s,
                       u"/dev/null"_s}
        << u"formation"_s;
    QTest::addRow("formation not json")
        << QStringList{u"--via"_s, u"http://127.0.0.1:1"_s, u"--formation"_s, u"/dev/null"_s} << u"formation"_s;
    QTest::addRow("formation missing a fault")
        << QStringList{u"--via"_s, u"http://127.0.0.1:1"_s, u"--formation"_s,
                       QFINDTESTDATA("drill/formation-no-standby.json")}
        << u"formation"_s;
}

void TestDrill::cliRejectsBadOptions()
{
    QFETCH(QStringList, args);
    QFETCH(QString, field);
    QTemporaryDir dir;
    QString outText, errText;
    QTextStream out(&outText), err(&errText);
    const int code = Cli().run(QStringList{u"drill"_s, u"--json"_s, u"--data-dir"_s, dir.path()} + args, out, err);
    QCOMPARE(code, 2);
    const QJsonObject error = QJsonDocument::fromJson(outText.toUtf8()).object().value(u"error"_s).toObject();
    QCOMPARE(error.value(u"field"_s).toString(), field);
    QVERIFY(!QFile::exists(dir.filePath(u"redis.sock"_s))); // rejected before any server started
}

QTEST_GUILESS_MAIN(TestDrill)
#include "tst_drill.moc"
#include "support/TestChecks.h"
