// `flashstock-cli bench book`: the quick suite runs in-process on SQLite (and on PostgreSQL
// when FLASHSTOCK_TEST_PG_URL names a server), and its JSON has every case with sane
// figures: the correct paths never oversell, the naive one does at 32 clients. Figures are
// not timed here: this only keeps the benchmark from rotting.

#include "Cli.h"
#include "bench/BookBench.h"
#include "store/DbUrl.h"
#include "store/Database.h"
#include "support/TestChecks.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
    QJsonObject json() const { return QJsonDocument::fromJson(out.toUtf8()).object(); }
};

Run cli(const QStringList &args)
{
    Run run;
    QTextStream out(&run.out), err(&run.err);
    Cli c;
    run.exitCode = c.run(args, out, err);
    return run;
}

const QList<int> kClients{1, 8, 32};

/// Checks every case of every backend in `backends`; returns an empty string or the problem.
QString checkReport(const QJsonObject &json, const QStringList &backends)
{
    const QJsonArray cases = json.value(u"cases"_s).toArray();
    // PostgreSQL also runs pgbench's single-order transaction at each client count.
    const qsizetype expected = BookBench::caseNames().size() * kClients.size() * backends.size()
        + (backends.contains(u"postgresql"_s) ? kClients.size() : 0);
    if (cases.size() != expected)
        return u"expected %1 cases, got %2"_s.arg(expected).arg(cases.size());
    for (const QString &backend : backends) {
        for (const QString &name : BookBench::caseNames()) {
            for (int clients : kClients) {
                QJsonObject found;
                for (const QJsonValue &v : cases) {
                    const QJsonObject c = v.toObject();
                    if (c.value(u"name"_s).toString() == name && c.value(u"backend"_s).toString() == backend
                        && c.value(u"clients"_s).toInt() == clients)
                        found = c;
                }
                const QString where = u"%1 %2 %3 clients"_s.arg(backend, name).arg(clients);
                if (found.isEmpty())
                    return where + u": missing"_s;
                for (const QString &key : {u"ops_per_s"_s, u"p50_ms"_s, u"p99_ms"_s, u"oversold"_s})
                    if (!found.value(key).isDouble())
                        return where + u": no number "_s + key;
                if (found.value(u"ops_per_s"_s).toDouble() <= 0)
                    return where + u": ops_per_s not positive"_s;
                if (found.value(u"p99_ms"_s).toDouble() < found.value(u"p50_ms"_s).toDouble())
                    return where + u": p99 below p50"_s;
                const qint64 oversold = found.value(u"oversold"_s).toInteger();
                if (name != u"naive"_s && (oversold != 0 || found.value(u"unaccounted"_s).toInteger() != 0
                                           || found.value(u"errors"_s).toInteger() != 0))
                    return where + u": a correct path oversold, lost units or failed: "_s
                        + QString::fromUtf8(QJsonDocument(found).toJson(QJsonDocument::Compact));
                if (name == u"naive"_s && clients == 32 && oversold <= 0)
                    return where + u": the naive deduction did not oversell"_s;
            }
        }
        const QJsonArray ratios =
            json.value(u"ratios"_s).toObject().value(u"guarded_vs_bare"_s).toObject().value(backend).toArray();
        if (ratios.size() != kClients.size())
            return backend + u": guarded_vs_bare has %1 ratios"_s.arg(ratios.size());
        for (const QJsonValue &r : ratios)
            if (!r.isDouble() || r.toDouble() <= 0)
                return backend + u": a guarded_vs_bare ratio is not positive"_s;
        const QStringList batchedRatios = backend == u"postgresql"_s
            ? QStringList{u"batched_vs_guarded"_s, u"batched_vs_pgbench"_s}
            : QStringList{u"batched_vs_guarded"_s};
        for (const QString &name : batchedRatios) {
            const QJsonArray batched = json.value(u"ratios"_s).toObject().value(name).toObject().value(backend).toArray();
            if (batched.size() != kClients.size())
                return backend + u": %1 has %2 ratios"_s.arg(name).arg(batched.size());
            for (const QJsonValue &r : batched)
                if (!r.isDouble() || r.toDouble() <= 0)
                    return backend + u": a %1 ratio is not positive"_s.arg(name);
        }
        const QJsonValue spread =
            json.value(u"ratios"_s).toObject().value(u"buckets16_vs_row_32"_s).toObject().value(backend);
        if (!spread.isDouble() || spread.toDouble() <= 0)
            return backend + u": buckets16_vs_row_32 is not a positive ratio"_s;
    }
    return {};
}

/// Names of the databases on the server that look like benchmark scratch databases.
QStringList scratchDatabases(const DbUrl &url)
{
    QStringList names;
    {
        QSqlDatabase db = addPostgresConnection(url, u"tst-bench-admin"_s);
        if (db.open()) {
            QSqlQuery q(db);
            q.exec(u"SELECT datname FROM pg_database WHERE datname LIKE 'flashstock_bench_%'"_s);
            while (q.next())
                names << q.value(0).toString();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(u"tst-bench-admin"_s);
    return names;
}

} // namespace

class TestBench : public QObject {
    Q_OBJECT

private slots:
    void quickOnSqlite();
    void quickOnPostgres();
    void twoRunsOnOneRedis();
    void badOptions_data();
    void badOptions();
};

void TestBench::quickOnSqlite()
{
    // A --db that names the operator's book must not be touched (not even created).
    QTemporaryDir dir;
    const QString book = dir.filePath(u"operator.db"_s);
    const Run run = cli({u"bench"_s, u"book"_s, u"--quick"_s, u"--json"_s, u"--db"_s, u"sqlite:///"_s + book});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
    const QJsonObject json = run.json();
    const QString problem = checkReport(json, {u"sqlite"_s});
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(json.value(u"notes"_s).toArray().contains(u"postgresql: skipped, pass --bench-pg URL"_s));
    QVERIFY(!json.value(u"ratios"_s).toObject().value(u"guarded_vs_bare"_s).toObject().contains(u"postgresql"_s));
    QVERIFY2(!QFile::exists(book), "the benchmark created or wrote the --db book");
}

void TestBench::quickOnPostgres()
{
    const QString server = qEnvironmentVariable("FLASHSTOCK_TEST_PG_URL");
    FS_REQUIRE(!server.isEmpty(), "FLASHSTOCK_TEST_PG_URL is not set: run the tests through scripts/with-test-servers.sh");
    auto url = DbUrl::parse(server);
    QVERIFY2(url.has_value(), "FLASHSTOCK_TEST_PG_URL is not a valid URL");
    const QStringList before = scratchDatabases(*url);
    const Run run = cli({u"bench"_s, u"--quick"_s, u"--json"_s, u"--bench-pg"_s, server});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
    const QString problem = checkReport(run.json(), {u"sqlite"_s, u"postgresql"_s});
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(scratchDatabases(*url), before); // the scratch database was dropped
}

void TestBench::twoRunsOnOneRedis()
{
    // Each run has a fresh scratch book but the gate's redis-server keeps what earlier runs
    // left (their settled tokens by order id): a second run must not meet them.
    const QString redis = qEnvironmentVariable("FLASHSTOCK_TEST_REDIS_URL");
    FS_REQUIRE(!redis.isEmpty(), "FLASHSTOCK_TEST_REDIS_URL is not set: run the tests through scripts/with-test-servers.sh");
    QTemporaryDir dir;
    for (int run = 0; run < 2; ++run) {
        const Run r = cli({u"--data-dir"_s, dir.path(), u"--redis"_s, redis, u"bench"_s, u"--json"_s, u"--backends"_s,
                           u"sqlite"_s, u"--cases"_s, u"gate_book"_s, u"--clients"_s, u"2"_s, u"--seconds"_s, u"0.2"_s,
                           u"--crowd"_s, u"200"_s, u"--crowd-paths"_s, u"gate_book"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(u"run %1: "_s.arg(run + 1) + r.out + r.err));
        const QJsonObject json = r.json();
        const QJsonObject gateBook = json.value(u"cases"_s).toArray().first().toObject();
        QCOMPARE(gateBook.value(u"name"_s).toString(), u"gate_book"_s);
        QCOMPARE(gateBook.value(u"errors"_s).toInt(), 0);
        QVERIFY(gateBook.value(u"reserved"_s).toInt() > 0);
        const QJsonObject crowd = json.value(u"crowd"_s).toArray().first().toObject();
        QCOMPARE(crowd.value(u"errors"_s).toInt(), 0);
        QCOMPARE(crowd.value(u"oversold"_s).toInt(), 0);
    }
}

void TestBench::badOptions_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("field");
    QTest::newRow("unknown suite") << QStringList{u"bench"_s, u"nope"_s} << 2 << u"suite"_s;
    QTest::newRow("sqlite as bench-pg") << QStringList{u"bench"_s, u"--bench-pg"_s, u"sqlite:///x.db"_s} << 2
                                        << u"bench-pg"_s;
    QTest::newRow("malformed bench-pg") << QStringList{u"bench"_s, u"--bench-pg"_s, u"postgresql://"_s} << 2
                                        << u"bench-pg"_s;
    QTest::newRow("clients 0") << QStringList{u"bench"_s, u"--clients"_s, u"1,0"_s} << 2 << u"clients"_s;
    QTest::newRow("seconds 0") << QStringList{u"bench"_s, u"--seconds"_s, u"0"_s} << 2 << u"seconds"_s;
    QTest::newRow("unknown case") << QStringList{u"bench"_s, u"--cases"_s, u"fast"_s} << 2 << u"case"_s;
    // Nothing listens on port 1: fails at once, before the SQLite run.
    QTest::newRow("server down") << QStringList{u"bench"_s, u"--bench-pg"_s, u"postgresql://u:p@127.0.0.1:1/db"_s}
                                 << 1 << u"bench-pg"_s;
}

void TestBench::badOptions()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, field);
    const Run run = cli(args + QStringList{u"--json"_s});
    QCOMPARE(run.exitCode, exitCode);
    const QJsonObject error = run.json().value(u"error"_s).toObject();
    QCOMPARE(error.value(u"field"_s).toString(), field);
    QVERIFY(!error.value(u"message"_s).toString().isEmpty());
}

QTEST_GUILESS_MAIN(TestBench)
#include "tst_bench.moc"
