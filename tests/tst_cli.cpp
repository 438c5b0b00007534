// flashstock-cli: bad input is refused with a clear message naming the field, exit code 2,
// and changes nothing; JSON shapes and exit codes as in DESIGN.md. Commands run in-process
// (Cli::run on string streams), and the real binary runs once.

#include "BuildInfo.h"
#include "Cli.h"
#include "Engine.h"
#include "gate/EmbeddedRedis.h"
#include "gate/RedisConnection.h"
#include "store/Database.h"
#include "support/BookFixture.h"
#include "support/HttpSink.h"
#include "support/RedisFixture.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QFileInfo>
#include <QMessageAuthenticationCode>
#include <QProcess>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <atomic>
#include <csignal>
#include <thread>

#include <pwd.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
    QJsonObject json() const { return QJsonDocument::fromJson(out.toUtf8()).object(); }
};

/// Runs a command in-process, as given (the data dir's defaults unless it names others).
Run cliAsGiven(const QStringList &args)
{
    Run run;
    QTextStream out(&run.out), err(&run.err);
    Cli c;
    run.exitCode = c.run(args, out, err);
    return run;
}

/// Runs a command in-process; book-only (`--redis none`) unless the arguments name a gate.
Run cli(QStringList args)
{
    if (!args.contains(u"--redis"_s))
        args << u"--redis"_s << u"none"_s;
    return cliAsGiven(args);
}

/// Runs an `--every` loop in-process and stops it as an operator would (SIGTERM, handled by
/// StopSignal) after `ms`.
Run untilStopped(const QStringList &args, int ms)
{
    std::thread stopper([ms] {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        ::kill(::getpid(), SIGTERM);
    });
    Run run = cli(args);
    stopper.join();
    return run;
}

/// Writes `[approval] approvers=NAMES` into data dir `dir`'s flashstock.ini (the seed of a
/// book's approver policy).
bool writeApproverSeed(const QString &dir, const QString &names)
{
    QFile ini(dir + u"/flashstock.ini"_s);
    if (!ini.open(QIODevice::WriteOnly))
        return false;
    ini.write("[approval]\napprovers=" + names.toUtf8() + '\n');
    return true;
}

/// Runs the real binary as on another machine, host `host`: in a UTS namespace of its own
/// (`unshare --uts`; not as root, in a user namespace too, where its OS user is root), so
/// that its decisions come from another place than this process's: a second person for four
/// eyes. `ran` false if the namespace could not be made here.
Run realCliOnHost(const QString &host, const QStringList &args, bool &ran)
{
    QProcess p;
    QStringList unshare{u"--uts"_s};
    if (::geteuid() != 0)
        unshare << u"--map-root-user"_s;
    p.start(u"unshare"_s, unshare + QStringList{u"sh"_s, u"-c"_s, u"hostname \"$0\" && exec \"$@\""_s, host,
                                                QStringLiteral(FLASHSTOCK_CLI_PATH)}
                              + args);
    Run run;
    ran = p.waitForStarted(10000) && p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit;
    run.exitCode = p.exitCode();
    run.out = QString::fromUtf8(p.readAllStandardOutput());
    run.err = QString::fromUtf8(p.readAllStandardError());
    // sh's own failure (no namespace, no hostname): nothing of the binary ran.
    ran = ran && !run.err.contains(u"unshare:"_s) && !run.err.contains(u"hostname:"_s);
    return run;
}

/// The JSON objects of `text`, one per line.
QList<QJsonObject> jsonLines(const QString &text)
{
    QList<QJsonObject> objects;
    for (const QString &line : text.split(u'\n', Qt::SkipEmptyParts))
        objects << QJsonDocument::fromJson(line.toUtf8()).object();
    return objects;
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void passwordLeavesTheCommandLine();
    void passwordFromAPrivateFile();
    void badInputChangesNothing_data();
    void badInputChangesNothing();
    void jsonShapes_data() { test::addBackendRows(); }
    void jsonShapes();
    void notAFlashStockDatabase();
    void newerSchemaIsRefused();
    void realBinary();
    void embeddedGateByDefault();
    void embeddedStopTellsTheTruthAndHolds();
    void wrongRedisPasswordIsAuthenticationFailure();
    void reconcileAndApprovalExitCodes_data() { test::addBackendRows(); }
    void reconcileAndApprovalExitCodes();
    void approverCommands_data() { test::addBackendRows(); }
    void approverCommands();
    void approvalCarriesWhatWasSeen_data() { test::addBackendRows(); }
    void approvalCarriesWhatWasSeen();
    void alertsAreSentUntilDelivered_data() { test::addBackendRows(); }
    void alertsAreSentUntilDelivered();
    void alertsAreSignedAndFailuresShown();
    void embeddedGateThatFailsIsDownNotAbsent();
    void saleStartFollowsTheLaunchRules();
    void everyLoopsWriteToTheCommandStreams();
    void skuListTextAndJson();
    void drillRefusesABookOrGateWithAnOpenSale();
};

void TestCli::badInputChangesNothing_data()
{
    QTest::addColumn<QString>("backend");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("field");
    const QString longOrder(10000, u'x');
    struct Case {
        const char *name;
        QStringList args;
        QString field;
    };
    const QList<Case> cases{
        {"qty 0", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"0"_s}, u"qty"_s},
        {"qty -1", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"-1"_s}, u"qty"_s},
        {"qty 2^31", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"2147483648"_s}, u"qty"_s},
        {"qty huge", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"99999999999999999999999"_s},
         u"qty"_s},
        {"qty 1.5", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1.5"_s}, u"qty"_s},
        {"line qty 0", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--line"_s, u"A:0"_s}, u"line"_s},
        {"line no qty", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--line"_s, u"A"_s}, u"line"_s},
        {"restock 0", {u"sku"_s, u"restock"_s, u"A"_s, u"--qty"_s, u"0"_s}, u"qty"_s},
        {"restock 2^31", {u"sku"_s, u"restock"_s, u"A"_s, u"--qty"_s, u"2147483648"_s}, u"qty"_s},
        {"stock -5", {u"sku"_s, u"add"_s, u"C"_s, u"--stock"_s, u"-5"_s}, u"stock"_s},
        {"buckets 0", {u"sku"_s, u"add"_s, u"C"_s, u"--stock"_s, u"5"_s, u"--buckets"_s, u"0"_s}, u"buckets"_s},
        {"buckets 2000", {u"sku"_s, u"add"_s, u"C"_s, u"--stock"_s, u"5"_s, u"--buckets"_s, u"2000"_s}, u"buckets"_s},
        {"unknown sku reserve", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"NOPE"_s, u"--qty"_s, u"1"_s}, u"sku"_s},
        {"unknown sku show", {u"sku"_s, u"show"_s, u"NOPE"_s}, u"sku"_s},
        {"unknown sku restock", {u"sku"_s, u"restock"_s, u"NOPE"_s, u"--qty"_s, u"1"_s}, u"sku"_s},
        {"unknown sku ledger", {u"ledger"_s, u"--sku"_s, u"NOPE"_s}, u"sku"_s},
        {"existing sku add", {u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"5"_s}, u"sku"_s},
        {"unknown order confirm", {u"confirm"_s, u"--order"_s, u"ghost"_s, u"--payment"_s, u"p"_s}, u"order"_s},
        {"unknown order release", {u"release"_s, u"--order"_s, u"ghost"_s, u"--reason"_s, u"cancel"_s}, u"order"_s},
        {"bad release reason", {u"release"_s, u"--order"_s, u"o1"_s, u"--reason"_s, u"bored"_s}, u"reason"_s},
        {"empty order", {u"reserve"_s, u"--order"_s, u""_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s}, u"order"_s},
        {"10000-char order", {u"reserve"_s, u"--order"_s, longOrder, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s}, u"order"_s},
        {"order with colon", {u"reserve"_s, u"--order"_s, u"a:b"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s}, u"order"_s},
        {"sku quote", {u"sku"_s, u"add"_s, u"A'B"_s, u"--stock"_s, u"1"_s}, u"sku"_s},
        {"sku double quote", {u"sku"_s, u"add"_s, u"A\"B"_s, u"--stock"_s, u"1"_s}, u"sku"_s},
        {"sku semicolon", {u"sku"_s, u"add"_s, u"A;DROP TABLE ledger"_s, u"--stock"_s, u"1"_s}, u"sku"_s},
        {"sku newline", {u"sku"_s, u"add"_s, u"A\nB"_s, u"--stock"_s, u"1"_s}, u"sku"_s},
        {"sku braces", {u"sku"_s, u"add"_s, u"{A}"_s, u"--stock"_s, u"1"_s}, u"sku"_s},
        {"sku hash", {u"sku"_s, u"add"_s, u"A#1"_s, u"--stock"_s, u"1"_s}, u"sku"_s},
        {"sku non-ascii", {u"sku"_s, u"add"_s, u"商品"_s, u"--stock"_s, u"1"_s}, u"sku"_s},
        {"sku 65 chars", {u"sku"_s, u"add"_s, QString(65, u'S'), u"--stock"_s, u"1"_s}, u"sku"_s},
        {"reserve sku non-ascii", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"Äpfel"_s, u"--qty"_s, u"1"_s},
         u"sku"_s},
        {"malformed db url", {u"--db"_s, u"mysql://x/y"_s, u"sku"_s, u"show"_s, u"A"_s}, u"db"_s},
        {"db url no user", {u"--db"_s, u"postgresql://localhost/db"_s, u"sku"_s, u"show"_s, u"A"_s}, u"db"_s},
        {"db url two slashes", {u"--db"_s, u"sqlite://x.db"_s, u"sku"_s, u"show"_s, u"A"_s}, u"db"_s},
        {"unknown option", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s, u"--colour"_s, u"red"_s},
         u"arguments"_s},
        {"unknown command", {u"teleport"_s}, u"command"_s},
        {"no command", {}, u"command"_s},
        {"empty data-dir", {u"--data-dir"_s, u""_s, u"sku"_s, u"show"_s, u"A"_s}, u"data-dir"_s},
        {"empty db", {u"--db"_s, u""_s, u"sku"_s, u"show"_s, u"A"_s}, u"db"_s},
        {"empty operator", {u"--operator"_s, u" "_s, u"sku"_s, u"show"_s, u"A"_s}, u"operator"_s},
        {"db password bad port", {u"--db"_s, u"postgresql://fs:s3cret@127.0.0.1:99999/x"_s, u"sku"_s, u"show"_s, u"A"_s},
         u"db"_s},
        {"db password with query", {u"--db"_s, u"postgresql://fs:s3cret@127.0.0.1:5432/x?colour=red"_s, u"sku"_s,
                                    u"show"_s, u"A"_s}, u"db"_s},
        {"second sale on a sku", {u"sale"_s, u"create"_s, u"--sku"_s, u"S"_s}, u"sku"_s},
        {"operator with newline", {u"--operator"_s, u"eve\nil"_s, u"sku"_s, u"restock"_s, u"A"_s, u"--qty"_s, u"1"_s},
         u"operator"_s},
        {"user too long", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s, u"--user"_s,
                           QString(200, u'u')}, u"user"_s},
        {"operator with a bidi override", {u"--operator"_s, u"eve\u202Eli"_s, u"sku"_s, u"restock"_s, u"A"_s,
                                           u"--qty"_s, u"1"_s}, u"operator"_s},
        {"user with a zero-width space", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s,
                                          u"--user"_s, u"bo\u200Bb"_s}, u"user"_s},
        {"user not in NFC", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s, u"--user"_s,
                             u"jose\u0301"_s}, u"user"_s},
        {"payment with a screen clear", {u"confirm"_s, u"--order"_s, u"o1"_s, u"--payment"_s, u"p\x1b[2J"_s},
         u"payment"_s},
        // a lone surrogate has no UTF-8: stored, it would become `?` and name another user
        {"user with a lone surrogate", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s,
                                        u"--user"_s, u"a"_s + QChar(0xD800) + u"b"_s}, u"user"_s},
        {"operator with a lone low surrogate", {u"--operator"_s, u"eve"_s + QChar(0xDC00), u"sku"_s, u"restock"_s,
                                                u"A"_s, u"--qty"_s, u"1"_s}, u"operator"_s},
        {"user with an invisible tag character", {u"reserve"_s, u"--order"_s, u"n1"_s, u"--sku"_s, u"A"_s, u"--qty"_s,
                                                   u"1"_s, u"--user"_s, u"bob"_s + QString::fromUcs4(U"\U000E0041")},
         u"user"_s},
        {"grace below what a reserve may take", {u"reconcile"_s, u"--grace"_s, u"1"_s, u"--redis"_s, u"none"_s},
         u"grace"_s},
    };
    for (const QString &backend : test::bookBackends())
        for (const Case &c : cases)
            QTest::addRow("%s %s", qPrintable(backend), c.name) << backend << c.args << c.field;
}

void TestCli::badInputChangesNothing()
{
    QFETCH(QString, backend);
    QFETCH(QStringList, args);
    QFETCH(QString, field);
    FS_FRESH_BOOK(fresh, backend);
    {
        auto setup = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(setup);
        FS_VERIFY_OK((*setup)->addSku(u"A"_s, 5));
        FS_VERIFY_OK((*setup)->reserve(u"o1"_s, {}, {{u"A"_s, 1, {}}}));
        FS_VERIFY_OK((*setup)->addSku(u"S"_s, 5));
        FS_VERIFY_OK((*setup)->createSale(u"S"_s, 0, 0, 60, 0)); // one sale per SKU at a time
    }
    auto ledgerCount = [&]() -> qint64 {
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        if (!e) { // both counts -1 would hide a change: fail instead
            QTest::qFail(qPrintable(test::failureText(e, "Engine::open")), __FILE__, __LINE__);
            return -1;
        }
        return FS_OK((*e)->book().ledgerCount());
    };
    const qint64 before = ledgerCount();

    QStringList full = args;
    if (!args.contains(u"--db"_s))
        full << u"--db"_s << fresh.urlText();
    full << u"--json"_s;
    const Run run = cli(full);
    QCOMPARE(run.exitCode, 2);
    const QJsonObject error = run.json().value(u"error"_s).toObject();
    QVERIFY2(!error.isEmpty(), qPrintable(run.out));
    QCOMPARE(error.value(u"field"_s).toString(), field);
    QVERIFY2(error.value(u"message"_s).toString().contains(field), qPrintable(error.value(u"message"_s).toString()));
    QVERIFY2(!run.out.contains(u"s3cret"_s) && !run.err.contains(u"s3cret"_s), "a password was echoed");
    QCOMPARE(ledgerCount(), before);
}

void TestCli::jsonShapes()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    const QStringList db{u"--db"_s, fresh.urlText(), u"--json"_s, u"--operator"_s, u"alice"_s};

    Run add = cli(QStringList{u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"3"_s} + db);
    QCOMPARE(add.exitCode, 0);
    // Global options before the command words work too.
    Run show = cli(db + QStringList{u"sku"_s, u"show"_s, u"A"_s});
    QCOMPARE(show.exitCode, 0);
    const QJsonObject s = show.json();
    QCOMPARE(s.value(u"sku"_s).toString(), u"A"_s);
    QCOMPARE(s.value(u"book"_s).toObject().value(u"available"_s).toInt(), 3);
    QCOMPARE(s.value(u"book"_s).toObject().value(u"total"_s).toInt(), 3);
    QVERIFY(s.value(u"gate"_s).isNull());
    QCOMPARE(s.value(u"buckets"_s).toArray().size(), 1);

    Run r1 = cli(QStringList{u"reserve"_s, u"--order"_s, u"o1"_s, u"--line"_s, u"A:2"_s} + db);
    QCOMPARE(r1.exitCode, 0);
    QCOMPARE(r1.json().value(u"result"_s).toString(), u"reserved"_s);
    QCOMPARE(r1.json().value(u"order"_s).toString(), u"o1"_s);
    QVERIFY(r1.json().value(u"tokens"_s).isArray());
    Run r2 = cli(QStringList{u"reserve"_s, u"--order"_s, u"o2"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"2"_s} + db);
    QCOMPARE(r2.exitCode, 0);
    QCOMPARE(r2.json().value(u"result"_s).toString(), u"out_of_stock"_s);

    Run c1 = cli(QStringList{u"confirm"_s, u"--order"_s, u"o1"_s, u"--payment"_s, u"p1"_s} + db);
    QCOMPARE(c1.json(), (QJsonObject{{u"result"_s, u"paid"_s}, {u"order"_s, u"o1"_s}}));
    Run c2 = cli(QStringList{u"confirm"_s, u"--order"_s, u"o1"_s, u"--payment"_s, u"p1"_s} + db);
    QCOMPARE(c2.json().value(u"result"_s).toString(), u"duplicate"_s);
    Run rel = cli(QStringList{u"release"_s, u"--order"_s, u"o1"_s, u"--reason"_s, u"cancel"_s} + db);
    QCOMPARE(rel.json().value(u"result"_s).toString(), u"already_paid"_s);

    Run ledger = cli(QStringList{u"ledger"_s, u"--order"_s, u"o1"_s} + db);
    QCOMPARE(ledger.exitCode, 0);
    const QJsonArray rows = ledger.json().value(u"rows"_s).toArray();
    QCOMPARE(rows.size(), 2);
    const QJsonObject reserveRow = rows.at(0).toObject();
    for (const QString &key : {u"order"_s, u"operation"_s, u"sku"_s, u"bucket"_s, u"delta_available"_s,
                               u"delta_locked"_s, u"delta_sold"_s, u"token"_s, u"operator"_s, u"at"_s})
        QVERIFY2(reserveRow.contains(key), qPrintable(key));
    QCOMPARE(reserveRow.value(u"operation"_s).toString(), u"RESERVE"_s);
    QCOMPARE(reserveRow.value(u"delta_available"_s).toInt(), -2);
    QCOMPARE(reserveRow.value(u"operator"_s).toString(), u"alice"_s);
    QCOMPARE(rows.at(1).toObject().value(u"operation"_s).toString(), u"CONFIRM"_s);

    Run none = cli(QStringList{u"ledger"_s, u"--order"_s, u"never-seen"_s} + db);
    QCOMPARE(none.exitCode, 0);
    QCOMPARE(none.json(), (QJsonObject{{u"rows"_s, QJsonArray()}}));

    Run expire = cli(QStringList{u"expire"_s} + db);
    QCOMPARE(expire.exitCode, 0);
    QCOMPARE(expire.json().value(u"released"_s).toInt(), 0);
}

void TestCli::notAFlashStockDatabase()
{
    QTemporaryDir dir;
    QFile junk(dir.filePath(u"junk.db"_s));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("this is a shopping list, not a database\n");
    junk.close();
    const QByteArray original = [&] { QFile f(junk.fileName()); f.open(QIODevice::ReadOnly); return f.readAll(); }();
    Run run = cli({u"--db"_s, u"sqlite:///"_s + junk.fileName(), u"sku"_s, u"show"_s, u"A"_s, u"--json"_s});
    QCOMPARE(run.exitCode, 2);
    QCOMPARE(run.json().value(u"error"_s).toObject().value(u"field"_s).toString(), u"db"_s);
    QFile after(junk.fileName());
    QVERIFY(after.open(QIODevice::ReadOnly));
    QCOMPARE(after.readAll(), original);

    // A real SQLite database of another application: refused, untouched.
    const QString other = dir.filePath(u"other.db"_s);
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, u"other"_s);
        db.setDatabaseName(other);
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.exec(u"CREATE TABLE invoices (id INTEGER PRIMARY KEY)"_s));
        db.close();
    }
    QSqlDatabase::removeDatabase(u"other"_s);
    const QByteArray otherBytes = [&] { QFile f(other); f.open(QIODevice::ReadOnly); return f.readAll(); }();
    run = cli({u"--db"_s, u"sqlite:///"_s + other, u"sku"_s, u"show"_s, u"A"_s, u"--json"_s});
    QCOMPARE(run.exitCode, 2);
    // Left untouched: not even switched to WAL (which rewrites the header).
    QCOMPARE([&] { QFile f(other); f.open(QIODevice::ReadOnly); return f.readAll(); }(), otherBytes);
    QVERIFY(run.json().value(u"error"_s).toObject().value(u"message"_s).toString().contains(u"not a FlashStock"_s));
}

void TestCli::newerSchemaIsRefused()
{
    QTemporaryDir dir;
    const QString url = u"sqlite:///"_s + dir.filePath(u"book.db"_s);
    QCOMPARE(cli({u"--db"_s, url, u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"1"_s}).exitCode, 0);
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, u"bump"_s);
        db.setDatabaseName(dir.filePath(u"book.db"_s));
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.exec(u"UPDATE meta SET value = '999' WHERE key = 'schema_version'"_s));
        db.close();
    }
    QSqlDatabase::removeDatabase(u"bump"_s);
    Run run = cli({u"--db"_s, url, u"sku"_s, u"show"_s, u"A"_s, u"--json"_s});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.json().value(u"error"_s).toObject().value(u"message"_s).toString().contains(u"newer"_s), qPrintable(run.out));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, u"garble"_s);
        db.setDatabaseName(dir.filePath(u"book.db"_s));
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.exec(u"UPDATE meta SET value = 'abc' WHERE key = 'schema_version'"_s));
        db.close();
    }
    QSqlDatabase::removeDatabase(u"garble"_s);
    run = cli({u"--db"_s, url, u"sku"_s, u"show"_s, u"A"_s, u"--json"_s});
    QCOMPARE(run.exitCode, 2); // an unreadable version is bad input, never a migration from 0
    QVERIFY2(run.json().value(u"error"_s).toObject().value(u"message"_s).toString().contains(u"unreadable"_s),
             qPrintable(run.out));
}

void TestCli::realBinary()
{
    QTemporaryDir dir;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"FLASHSTOCK_DATA_DIR"_s, dir.filePath(u"data"_s));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(FLASHSTOCK_CLI_PATH), {u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"2"_s, u"--json"_s, u"--redis"_s, u"none"_s});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    const QJsonObject out = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    QCOMPARE(out.value(u"book"_s).toObject().value(u"available"_s).toInt(), 2);
    QVERIFY(QFile::exists(dir.filePath(u"data/flashstock.db"_s)));

    p.start(QStringLiteral(FLASHSTOCK_CLI_PATH), {u"reserve"_s, u"--order"_s, u"o1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"0"_s, u"--redis"_s, u"none"_s});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(p.readAllStandardError().contains("qty"));
}

void TestCli::embeddedGateByDefault()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    QTemporaryDir dir;
    const QString data = dir.filePath(u"data"_s);
    auto run = [&](const QStringList &args) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"FLASHSTOCK_DATA_DIR"_s, data);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(FLASHSTOCK_CLI_PATH), args);
        p.waitForFinished(30000);
        return std::make_tuple(p.exitCode(), QJsonDocument::fromJson(p.readAllStandardOutput()).object(),
                               QString::fromUtf8(p.readAllStandardError()));
    };
    // Without --redis the first command that needs the gate starts a private redis-server
    // on a unix socket in the data dir, and says where.
    auto [code, json, err] = run({u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"3"_s, u"--json"_s});
    QCOMPARE(code, 0);
    QVERIFY2(err.contains(u"redis.sock"_s), qPrintable(err));
    QCOMPARE(json.value(u"gate"_s).toObject().value(u"available"_s).toInt(), 3);
    QVERIFY(QFileInfo(data + u"/redis.sock"_s).exists());
    auto [code2, json2, err2] = run({u"reserve"_s, u"--order"_s, u"o1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"2"_s,
                                     u"--json"_s});
    QCOMPARE(code2, 0);
    QCOMPARE(json2.value(u"result"_s).toString(), u"reserved"_s);
    QCOMPARE(json2.value(u"tokens"_s).toArray().size(), 1);
    QVERIFY2(!err2.contains(u"started"_s), "the second command must reuse the running server");
    auto [codeR, jsonR, errR] = run({u"reserve"_s, u"--order"_s, u"o2"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"2"_s,
                                     u"--json"_s});
    QCOMPARE(jsonR.value(u"result"_s).toString(), u"out_of_stock"_s);
    auto [code3, json3, err3] = run({u"sku"_s, u"show"_s, u"A"_s, u"--json"_s});
    QCOMPARE(json3.value(u"gate"_s).toObject().value(u"available"_s).toInt(), 1);
    // The gate counts reserves and refusals (the console's reject rate).
    QCOMPARE(json3.value(u"gate"_s).toObject().value(u"tokens_issued"_s).toInt(), 1);
    QCOMPARE(json3.value(u"gate"_s).toObject().value(u"refusals"_s).toObject().value(u"out_of_stock"_s).toInt(), 1);
    QCOMPARE(json3.value(u"book"_s).toObject().value(u"available"_s).toInt(), 1);
    auto [code4, json4, err4] = run({u"embedded"_s, u"status"_s, u"--json"_s});
    QCOMPARE(json4.value(u"running"_s).toBool(), true);
    auto [code5, json5, err5] = run({u"embedded"_s, u"stop"_s, u"--json"_s});
    QCOMPARE(code5, 0);
    QCOMPARE(json5.value(u"stopped"_s).toBool(), true);
    auto [code6, json6, err6] = run({u"embedded"_s, u"status"_s, u"--json"_s});
    QCOMPARE(json6.value(u"running"_s).toBool(), false);
}

void TestCli::embeddedStopTellsTheTruthAndHolds()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    QTemporaryDir dir;
    const QString data = dir.filePath(u"data"_s);
    auto run = [&](const QStringList &args) {
        QProcess p;
        p.start(QStringLiteral(FLASHSTOCK_CLI_PATH), QStringList{u"--data-dir"_s, data, u"--json"_s} + args);
        p.waitForFinished(60000);
        return std::make_tuple(p.exitCode(), QJsonDocument::fromJson(p.readAllStandardOutput()).object(),
                               QString::fromUtf8(p.readAllStandardError()));
    };
    QCOMPARE(std::get<0>(run({u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"3"_s})), 0);

    // Traffic: another process keeps starting the gate as commands do. Every stop says what
    // it did (the server it stopped, which is gone), never "did not stop" about one that
    // stopped and was started again.
    std::atomic<bool> busy{true};
    std::atomic<int> starts{0};
    std::thread traffic([&] {
        while (busy) {
            EmbeddedRedis gate(data);
            if (gate.start() && !gate.wasReused())
                ++starts;
            QThread::msleep(20);
        }
    });
    for (int round = 0; round < 4; ++round) {
        QTest::qWait(100);
        auto [code, json, err] = run({u"embedded"_s, u"stop"_s});
        QVERIFY2(code == 0, qPrintable(err));
        if (json.value(u"stopped"_s).toBool()) {
            const qint64 pid = json.value(u"pid"_s).toInteger();
            QVERIFY(pid > 0);
            QVERIFY2(::kill(pid_t(pid), 0) != 0, "the server reported stopped is still alive");
        }
    }
    busy = false;
    traffic.join();
    QVERIFY(starts > 0);

    // Held down for maintenance: no command starts it, each runs as with the gate down.
    auto [held, heldJson, heldErr] = run({u"embedded"_s, u"stop"_s, u"--hold"_s});
    QCOMPARE(held, 0);
    QCOMPARE(heldJson.value(u"held"_s).toBool(), true);
    auto [shown, shownJson, shownErr] = run({u"sku"_s, u"show"_s, u"A"_s});
    QCOMPARE(shownJson.value(u"book"_s).toObject().value(u"available"_s).toInt(), 3);
    QVERIFY2(shownErr.contains(u"held down"_s), qPrintable(shownErr));
    auto [reserved, reservedJson, reservedErr] =
        run({u"reserve"_s, u"--order"_s, u"o1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s});
    QCOMPARE(reservedJson.value(u"result"_s).toString(), u"gate_unavailable"_s);
    QVERIFY(!EmbeddedRedis(data).status().running);
    auto [status, statusJson, statusErr] = run({u"embedded"_s, u"status"_s});
    QCOMPARE(statusJson.value(u"running"_s).toBool(), false);
    QVERIFY(statusJson.value(u"held"_s).toObject().value(u"by"_s).toString().size() > 0);

    // embedded start lifts the hold; commands use the gate again.
    auto [started, startedJson, startedErr] = run({u"embedded"_s, u"start"_s});
    QVERIFY2(started == 0, qPrintable(startedErr));
    QCOMPARE(startedJson.value(u"hold_lifted"_s).toBool(), true);
    QCOMPARE(startedJson.value(u"running"_s).toBool(), true);
    auto [again, againJson, againErr] =
        run({u"reserve"_s, u"--order"_s, u"o2"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s});
    QCOMPARE(againJson.value(u"result"_s).toString(), u"reserved"_s);
    QCOMPARE(std::get<0>(run({u"embedded"_s, u"stop"_s})), 0);
}

void TestCli::wrongRedisPasswordIsAuthenticationFailure()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    RedisFixture redis;
    QVERIFY2(redis.start(), qPrintable(redis.errorString()));
    FS_VERIFY_OK(redis.command({"CONFIG", "SET", "requirepass", "right-pw"}));
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    const QStringList target{u"--db"_s, fresh.urlText(), u"--redis"_s, u"redis://127.0.0.1:%1"_s.arg(redis.port()),
                             u"--json"_s};
    QCOMPARE(cli(QStringList{u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"3"_s, u"--redis"_s, u"none"_s, u"--db"_s,
                             fresh.urlText()})
                 .exitCode,
             0);
    // A wrong password, and none for a server that wants one: authentication failed, exit 1.
    for (const QByteArray &password : {QByteArray("wrong-pw"), QByteArray()}) {
        qputenv("FLASHSTOCK_REDIS_PASSWORD", password);
        if (password.isEmpty())
            qunsetenv("FLASHSTOCK_REDIS_PASSWORD");
        const Run refused = cliAsGiven(QStringList{u"gate"_s, u"rebuild"_s, u"A"_s} + target);
        QCOMPARE(refused.exitCode, 1);
        const QString message = refused.json().value(u"error"_s).toObject().value(u"message"_s).toString();
        QVERIFY2(message.contains(u"authentication failed"_s), qPrintable(refused.out + refused.err));
        QVERIFY(!message.contains(u"wrong-pw"_s));
    }
    qputenv("FLASHSTOCK_REDIS_PASSWORD", "right-pw");
    const Run rebuilt = cliAsGiven(QStringList{u"gate"_s, u"rebuild"_s, u"A"_s} + target);
    qunsetenv("FLASHSTOCK_REDIS_PASSWORD");
    QVERIFY2(rebuilt.exitCode == 0, qPrintable(rebuilt.out + rebuilt.err));
    RedisConnection admin(FS_OK(RedisUrl::parse(u"redis://:right-pw@127.0.0.1:%1"_s.arg(redis.port()))));
    FS_VERIFY_OK(admin.command({"CONFIG", "SET", "requirepass", ""}));
}

void TestCli::reconcileAndApprovalExitCodes()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    QTemporaryDir data;
    QVERIFY(writeApproverSeed(data.path(), u"alice"_s));
    const QStringList db{u"--db"_s, fresh.urlText(), u"--data-dir"_s, data.path(), u"--json"_s};
    // `reconcile --every` (the real binary) stopped by SIGTERM after its first pass: its
    // exit code and last JSON line tell that pass, as a single run would.
    const auto everyUntilStopped = [&] {
        QProcess p;
        p.start(QStringLiteral(FLASHSTOCK_CLI_PATH),
                QStringList{u"reconcile"_s, u"--every"_s, u"60"_s, u"--grace"_s, u"0"_s, u"--unsafe-grace"_s, u"--redis"_s, u"none"_s} + db);
        bool passed = p.waitForStarted(10000);
        while (passed && !p.canReadLine())
            passed = p.waitForReadyRead(30000);
        p.terminate();
        p.waitForFinished(30000);
        const QList<QByteArray> lines = p.readAllStandardOutput().trimmed().split('\n');
        return std::make_pair(passed && p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                              QJsonDocument::fromJson(lines.last()).object());
    };
    QCOMPARE(cli(QStringList{u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"10"_s} + db).exitCode, 0);
    // Nothing wrong yet: exit 0 and no discrepancies.
    Run clean = cli(QStringList{u"reconcile"_s} + db);
    QCOMPARE(clean.exitCode, 0);
    QCOMPARE(clean.json().value(u"discrepancies"_s).toArray().size(), 0);
    {
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(e);
        // Units the ledger cannot explain (a bucket bumped behind the engine's back).
        FS_VERIFY_OK((*e)->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
    }
    Run found = cli(QStringList{u"reconcile"_s} + db);
    QCOMPARE(found.exitCode, 3);
    const auto [everyCode, everySummary] = everyUntilStopped();
    QCOMPARE(everyCode, 3);
    QCOMPARE(everySummary.value(u"still_pending"_s).toInteger(), 1);
    QCOMPARE(everySummary.value(u"stopped"_s).toBool(), true);
    const QJsonArray list = found.json().value(u"discrepancies"_s).toArray();
    QCOMPARE(list.size(), 1);
    const QJsonObject d = list.first().toObject();
    QCOMPARE(d.value(u"status"_s).toString(), u"pending_approval"_s);
    QCOMPARE(d.value(u"delta"_s).toInteger(), -5);
    const QString id = QString::number(d.value(u"id"_s).toInteger());
    const QString seen = d.value(u"fingerprint"_s).toString();
    QVERIFY(!seen.isEmpty());
    QCOMPARE(cli(QStringList{u"reserve"_s, u"--order"_s, u"o1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s} + db)
                 .json().value(u"result"_s).toString(),
             u"paused"_s);

    Run refused = cli(QStringList{u"discrepancy"_s, u"approve"_s, id, u"--seen"_s, seen, u"--reason"_s, u"count"_s,
                                  u"--operator"_s, u"mallory"_s} + db);
    QCOMPARE(refused.exitCode, 4);
    Run noReason = cli(QStringList{u"discrepancy"_s, u"approve"_s, id, u"--seen"_s, seen, u"--operator"_s, u"alice"_s} + db);
    QCOMPARE(noReason.exitCode, 2);
    Run approved = cli(QStringList{u"discrepancy"_s, u"approve"_s, id, u"--seen"_s, seen, u"--reason"_s,
                                   u"restore to the ledger"_s, u"--operator"_s, u"alice"_s} + db);
    QCOMPARE(approved.exitCode, 0);
    Run again = cli(QStringList{u"discrepancy"_s, u"approve"_s, id, u"--seen"_s, seen, u"--reason"_s, u"again"_s,
                                u"--operator"_s, u"alice"_s} + db);
    QCOMPARE(again.exitCode, 0); // the same decision again: answered as it stands, applied once
    Run late = cli(QStringList{u"discrepancy"_s, u"reject"_s, id, u"--reason"_s, u"too late"_s, u"--operator"_s,
                               u"alice"_s} + db);
    QCOMPARE(late.exitCode, 2); // already approved: a reject changes nothing and says so
    QVERIFY2(late.json().value(u"error"_s).toObject().value(u"message"_s).toString().contains(u"approved"_s),
             qPrintable(late.out));
    Run show = cli(QStringList{u"sku"_s, u"show"_s, u"A"_s} + db);
    QCOMPARE(show.json().value(u"book"_s).toObject().value(u"available"_s).toInt(), 10);
    QCOMPARE(cli(QStringList{u"reconcile"_s} + db).exitCode, 0);
    QCOMPARE(everyUntilStopped().first, 0);
    QCOMPARE(cli(QStringList{u"reserve"_s, u"--order"_s, u"o2"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"1"_s} + db)
                 .json().value(u"result"_s).toString(),
             u"reserved"_s);
}


void TestCli::approvalCarriesWhatWasSeen()
{
    // `discrepancy approve` applies the proposal its --seen names (as `discrepancy show`
    // prints it): without one it shows the proposal and changes nothing; after the SKU moved
    // it changes nothing and says to reconcile and decide again.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    QTemporaryDir data;
    QVERIFY(writeApproverSeed(data.path(), u"alice"_s));
    const QStringList db{u"--db"_s, fresh.urlText(), u"--data-dir"_s, data.path(), u"--json"_s, u"--operator"_s,
                         u"alice"_s};
    QCOMPARE(cli(QStringList{u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"10"_s} + db).exitCode, 0);
    QCOMPARE(cli(QStringList{u"approver"_s, u"policy"_s, u"--four-eyes-units"_s, u"5000"_s} + db).exitCode, 0);
    const auto bump = [&](int units) {
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        return e && (*e)->database().exec(u"UPDATE buckets SET available = available + %1, total = total + %1"_s.arg(units));
    };
    const auto available = [&] {
        return cli(QStringList{u"sku"_s, u"show"_s, u"A"_s} + db).json().value(u"book"_s).toObject().value(u"available"_s).toInt();
    };
    QVERIFY(bump(5));
    Run found = cli(QStringList{u"reconcile"_s} + db);
    QCOMPARE(found.exitCode, 3);
    const QString id = QString::number(
        found.json().value(u"discrepancies"_s).toArray().first().toObject().value(u"id"_s).toInteger());
    Run shown = cli(QStringList{u"discrepancy"_s, u"show"_s, id} + db);
    const QString seen = shown.json().value(u"fingerprint"_s).toString();
    QVERIFY2(!seen.isEmpty(), qPrintable(shown.out));

    Run unseen = cli(QStringList{u"discrepancy"_s, u"approve"_s, id, u"--reason"_s, u"counted"_s} + db);
    QCOMPARE(unseen.exitCode, 2);
    const QJsonObject why = unseen.json().value(u"error"_s).toObject();
    QCOMPARE(why.value(u"field"_s).toString(), u"seen"_s);
    QVERIFY2(why.value(u"message"_s).toString().contains(u"--seen "_s + seen)
                 && why.value(u"message"_s).toString().contains(u"restore A bucket 0"_s),
             qPrintable(unseen.out));
    QCOMPARE(available(), 15);

    QVERIFY(bump(2000));
    Run moved = cli(QStringList{u"discrepancy"_s, u"approve"_s, id, u"--seen"_s, seen, u"--reason"_s, u"counted"_s} + db);
    QCOMPARE(moved.exitCode, 2);
    QVERIFY2(moved.json().value(u"error"_s).toObject().value(u"message"_s).toString().contains(
                 u"the SKU moved; reconcile and decide again"_s),
             qPrintable(moved.out));
    QCOMPARE(available(), 2015);
    QVERIFY(cli(QStringList{u"discrepancy"_s, u"show"_s, id} + db).json().value(u"decisions"_s).toArray().isEmpty());

    QCOMPARE(cli(QStringList{u"reconcile"_s} + db).exitCode, 3);
    const QString again = cli(QStringList{u"discrepancy"_s, u"show"_s, id} + db).json().value(u"fingerprint"_s).toString();
    QVERIFY(!again.isEmpty() && again != seen);
    Run approved = cli(QStringList{u"discrepancy"_s, u"approve"_s, id, u"--seen"_s, again, u"--reason"_s, u"counted"_s} + db);
    QCOMPARE(approved.exitCode, 0);
    QCOMPARE(approved.json().value(u"status"_s).toString(), u"approved"_s);
    QCOMPARE(available(), 10);

    Run help = cli({u"discrepancy"_s, u"approve"_s, u"--help"_s});
    QVERIFY2(help.out.contains(u"--seen"_s) && help.out.contains(u"moved"_s), qPrintable(help.out));
}

void TestCli::approverCommands()
{
    // The approver policy is the book's: seeded once from the data dir, changed by approvers
    // only (exit 4 otherwise), never widened by FLASHSTOCK_APPROVERS; four eyes above the
    // policy's units; every decision shows who asserted it and where it came from.
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    QTemporaryDir data;
    QVERIFY(writeApproverSeed(data.path(), u"alice"_s));
    const QStringList db{u"--db"_s, fresh.urlText(), u"--data-dir"_s, data.path(), u"--json"_s};
    const auto as = [&](const QString &who, const QStringList &args) {
        return cli(args + db + QStringList{u"--operator"_s, who});
    };
    qputenv("FLASHSTOCK_APPROVERS", "mallory");
    const auto unset = qScopeGuard([] { qunsetenv("FLASHSTOCK_APPROVERS"); });
    Run list = as(u"mallory"_s, {u"approver"_s, u"list"_s});
    QCOMPARE(list.exitCode, 0);
    QCOMPARE(list.json().value(u"approvers"_s).toArray(), QJsonArray{u"alice"_s});
    QCOMPARE(list.json().value(u"four_eyes_units"_s).toInteger(), 100);
    QCOMPARE(list.json().value(u"operator_may_approve"_s).toBool(), false);
    QCOMPARE(as(u"mallory"_s, {u"approver"_s, u"add"_s, u"mallory"_s}).exitCode, 4);
    Run added = as(u"alice"_s, {u"approver"_s, u"add"_s, u"bob"_s});
    QCOMPARE(added.exitCode, 0);
    QCOMPARE(added.json().value(u"added"_s).toBool(), true);
    QCOMPARE(added.json().value(u"approvers"_s).toArray(), (QJsonArray{u"alice"_s, u"bob"_s}));
    QCOMPARE(as(u"bob"_s, {u"approver"_s, u"policy"_s, u"--four-eyes-units"_s, u"-1"_s}).exitCode, 2);
    Run policy = as(u"bob"_s, {u"approver"_s, u"policy"_s, u"--four-eyes-units"_s, u"3"_s});
    QCOMPARE(policy.exitCode, 0);
    QCOMPARE(policy.json().value(u"four_eyes_units"_s).toInteger(), 3);
    QCOMPARE(as(u"bob"_s, {u"approver"_s, u"remove"_s, u"alice"_s}).exitCode, 0);
    Run lastOne = as(u"bob"_s, {u"approver"_s, u"remove"_s, u"bob"_s});
    QCOMPARE(lastOne.exitCode, 2);
    QCOMPARE(lastOne.json().value(u"error"_s).toObject().value(u"field"_s).toString(), u"name"_s);
    // The data dir's list seeded once: editing it later widens nothing.
    QVERIFY(writeApproverSeed(data.path(), u"mallory"_s));
    QCOMPARE(as(u"mallory"_s, {u"approver"_s, u"list"_s}).json().value(u"approvers"_s).toArray(),
             QJsonArray{u"bob"_s});
    QCOMPARE(as(u"bob"_s, {u"approver"_s, u"list"_s}).json().value(u"operator_may_approve"_s).toBool(), true);
    Run text = cli({u"approver"_s, u"list"_s, u"--db"_s, fresh.urlText(), u"--data-dir"_s, data.path(),
                    u"--operator"_s, u"bob"_s, u"--redis"_s, u"none"_s});
    QVERIFY2(text.out.contains(u"approvers: bob"_s) && text.out.contains(u"operator bob may approve"_s),
             qPrintable(text.out));

    // A 5-unit correction above the limit of 3: bob's approval waits for a second approver.
    QCOMPARE(as(u"bob"_s, {u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"10"_s}).exitCode, 0);
    {
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(e);
        FS_VERIFY_OK((*e)->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
    }
    Run found = as(u"bob"_s, {u"reconcile"_s});
    QCOMPARE(found.exitCode, 3);
    const QJsonObject pending = found.json().value(u"discrepancies"_s).toArray().first().toObject();
    const QString id = QString::number(pending.value(u"id"_s).toInteger());
    const QStringList approve{u"discrepancy"_s, u"approve"_s, id, u"--seen"_s,
                              pending.value(u"fingerprint"_s).toString(), u"--reason"_s, u"recounted"_s};
    Run first = as(u"bob"_s, approve);
    QCOMPARE(first.exitCode, 0);
    QCOMPARE(first.json().value(u"status"_s).toString(), u"pending_approval"_s);
    QCOMPARE(first.json().value(u"awaits_second_approver"_s).toBool(), true);
    QCOMPARE(as(u"bob"_s, approve).exitCode, 4);
    QCOMPARE(as(u"bob"_s, {u"approver"_s, u"add"_s, u"carol"_s}).exitCode, 0);
    // Another name from bob's account is bob: four eyes are two people.
    Run sameAccount = as(u"carol"_s, approve);
    QCOMPARE(sameAccount.exitCode, 4);
    QVERIFY2(sameAccount.json().value(u"error"_s).toObject().value(u"message"_s).toString().contains(
                 u"four eyes are two people"_s),
             qPrintable(sameAccount.out));
    // carol at her own machine: the real binary, on another host.
    bool ran = false;
    Run second = realCliOnHost(u"carols-desk"_s, approve + db + QStringList{u"--operator"_s, u"carol"_s, u"--redis"_s,
                                                                            u"none"_s},
                               ran);
    FS_REQUIRE(ran, "a UTS namespace (unshare --uts) for a second host");
    QVERIFY2(second.exitCode == 0, qPrintable(second.out + second.err));
    QCOMPARE(second.json().value(u"status"_s).toString(), u"approved"_s);
    QCOMPARE(as(u"bob"_s, {u"sku"_s, u"show"_s, u"A"_s}).json().value(u"book"_s).toObject().value(u"available"_s)
                 .toInt(),
             10);

    Run show = as(u"bob"_s, {u"discrepancy"_s, u"show"_s, id});
    const QJsonArray decisions = show.json().value(u"decisions"_s).toArray();
    QCOMPARE(decisions.size(), 2);
    const QString osUser = QString::fromLocal8Bit(getpwuid(geteuid())->pw_name);
    QCOMPARE(decisions.at(0).toObject().value(u"os_user"_s).toString(), osUser);
    QCOMPARE(decisions.at(0).toObject().value(u"host"_s).toString(), QSysInfo::machineHostName());
    QCOMPARE(decisions.at(1).toObject().value(u"host"_s).toString(), u"carols-desk"_s);
    for (const QJsonValue &v : decisions) {
        const QJsonObject d = v.toObject();
        if (backend == u"sqlite"_s)
            QVERIFY(d.value(u"db_role"_s).isNull());
        else
            QCOMPARE(d.value(u"db_role"_s).toString(), fresh.url().user);
    }
    QCOMPARE(decisions.at(0).toObject().value(u"operator"_s).toString(), u"bob"_s);
    QCOMPARE(decisions.at(0).toObject().value(u"applied"_s).toBool(), false);
    QCOMPARE(decisions.at(1).toObject().value(u"operator"_s).toString(), u"carol"_s);
    Run shown = cli({u"discrepancy"_s, u"show"_s, id, u"--db"_s, fresh.urlText(), u"--data-dir"_s, data.path(),
                     u"--redis"_s, u"none"_s});
    QVERIFY2(shown.out.contains(u"approve by carol (OS user %1 on carols-desk"_s.arg(::geteuid() == 0 ? osUser : u"root"_s)),
             qPrintable(shown.out));
}

void TestCli::alertsAreSentUntilDelivered()
{
    QFETCH(QString, backend);
    FS_FRESH_BOOK(fresh, backend);
    test::HttpSink sink;
    QVERIFY(sink.listen());
    const QStringList reconcile{u"reconcile"_s, u"--grace"_s, u"0"_s, u"--unsafe-grace"_s, u"--alert-url"_s, sink.url().toString(),
                                u"--db"_s, fresh.urlText(), u"--json"_s};
    QCOMPARE(cli({u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"10"_s, u"--db"_s, fresh.urlText()}).exitCode, 0);
    {
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(e);
        FS_VERIFY_OK((*e)->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
    }
    // The alert endpoint is down: every attempt fails, the discrepancy stays unalerted.
    sink.setStatus(503);
    QCOMPARE(cli(reconcile).exitCode, 3);
    const qsizetype attempts = sink.bodies().size();
    QVERIFY2(attempts >= 2, "an alert that fails is retried");
    const QJsonObject sent = QJsonDocument::fromJson(sink.bodies().first()).object();
    QCOMPARE(sent.value(u"alert"_s).toString(), u"discrepancy_pending_approval"_s);
    const qint64 id = sent.value(u"discrepancy"_s).toObject().value(u"id"_s).toInteger();
    QVERIFY(id > 0);
    // The endpoint is back: the next pass finds nothing new but sends the undelivered alert.
    sink.setStatus(200);
    QCOMPARE(cli(reconcile).exitCode, 3);
    QCOMPARE(sink.bodies().size(), attempts + 1);
    QCOMPARE(QJsonDocument::fromJson(sink.bodies().last()).object().value(u"discrepancy"_s).toObject()
                 .value(u"id"_s).toInteger(),
             id);
    // Delivered once: never again.
    QCOMPARE(cli(reconcile).exitCode, 3);
    QCOMPARE(sink.bodies().size(), attempts + 1);
}

void TestCli::alertsAreSignedAndFailuresShown()
{
    // Every alert says who sent it (User-Agent) and, with --alert-secret-file, carries an
    // HMAC-SHA256 of its timestamp and body that a receiver verifies with the shared key (a
    // wrong key does not verify). A delivery given up shows in the --json output.
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    QTemporaryDir dir;
    const QString keyFile = dir.filePath(u"alert.key"_s);
    {
        QFile f(keyFile);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("k3y-for-alerts\n");
        QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
    }
    test::HttpSink sink;
    QVERIFY(sink.listen());
    const QStringList reconcile{u"reconcile"_s, u"--alert-url"_s, sink.url().toString(), u"--alert-secret-file"_s,
                                keyFile, u"--db"_s, fresh.urlText(), u"--json"_s};
    const auto drift = [&](const QString &sku) {
        if (cli({u"sku"_s, u"add"_s, sku, u"--stock"_s, u"10"_s, u"--db"_s, fresh.urlText()}).exitCode != 0)
            return false;
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        return e
            && (*e)->database().exec(u"UPDATE buckets SET available = available + 1, total = total + 1 WHERE sku = ?"_s,
                                     {sku});
    };
    QVERIFY(drift(u"A"_s));
    Run sent = cli(reconcile);
    QCOMPARE(sent.exitCode, 3);
    QCOMPARE(sink.requests().size(), 1);
    const test::HttpSink::Request &r = sink.requests().first();
    QCOMPARE(r.headers.value("user-agent"), "FlashStock/" + buildVersion().toUtf8());
    const QByteArray timestamp = r.headers.value("x-flashstock-timestamp");
    QVERIFY(qAbs(timestamp.toLongLong() - QDateTime::currentSecsSinceEpoch()) < 300);
    const auto sign = [&](const QByteArray &key) {
        return "sha256="
            + QMessageAuthenticationCode::hash(timestamp + '.' + r.body, key, QCryptographicHash::Sha256).toHex();
    };
    QCOMPARE(r.headers.value("x-flashstock-signature"), sign("k3y-for-alerts"));
    QVERIFY(r.headers.value("x-flashstock-signature") != sign("wrong-key"));
    const QJsonObject delivered = sent.json().value(u"alerts"_s).toObject();
    QCOMPARE(delivered.value(u"delivered"_s).toInt(), 1);
    QCOMPARE(delivered.value(u"failed"_s).toInt(), 0);

    // The receiver is down: the output says so, with the discrepancy and why.
    sink.setStatus(503);
    QVERIFY(drift(u"B"_s));
    Run failed = cli(reconcile);
    QCOMPARE(failed.exitCode, 3);
    const QJsonObject alerts = failed.json().value(u"alerts"_s).toObject();
    QCOMPARE(alerts.value(u"failed"_s).toInt(), 1);
    const QJsonObject failure = alerts.value(u"failures"_s).toArray().first().toObject();
    QVERIFY(failure.value(u"discrepancy"_s).toInteger() > 0);
    QVERIFY2(failure.value(u"error"_s).toString().contains(u"HTTP 503"_s), qPrintable(failed.out));

    // A key file others can read is refused before anything is sent.
    QVERIFY(QFile::setPermissions(keyFile, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup));
    const qsizetype before = sink.requests().size();
    Run refused = cli(reconcile);
    QCOMPARE(refused.exitCode, 2);
    QCOMPARE(refused.json().value(u"error"_s).toObject().value(u"field"_s).toString(), u"alert-secret-file"_s);
    QCOMPARE(sink.requests().size(), before);
}

void TestCli::embeddedGateThatFailsIsDownNotAbsent()
{
    // The one rule of every binary: a data dir whose embedded redis-server cannot start (its
    // socket path is too long) leaves the gate configured and down, with the reason.
    QTemporaryDir base;
    const QStringList data{u"--data-dir"_s, base.filePath(QString(120, u'd')), u"--json"_s};
    const Run add = cliAsGiven(QStringList{u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"2"_s} + data);
    QCOMPARE(add.exitCode, 0); // the book has it
    QVERIFY2(add.err.contains(u"did not start, so the gate is down"_s), qPrintable(add.err));
    QVERIFY2(add.err.contains(u"too long"_s), qPrintable(add.err));
    QVERIFY(add.json().value(u"gate_error"_s).isString());
    const Run reserve = cliAsGiven(QStringList{u"reserve"_s, u"--order"_s, u"o1"_s, u"--sku"_s, u"A"_s, u"--qty"_s,
                                               u"1"_s} + data);
    QCOMPARE(reserve.exitCode, 1);
    QCOMPARE(reserve.json().value(u"result"_s).toString(), u"gate_unavailable"_s); // never book-only by accident
    const Run show = cliAsGiven(QStringList{u"sku"_s, u"show"_s, u"A"_s} + data);
    QCOMPARE(show.json().value(u"book"_s).toObject().value(u"available"_s).toInt(), 2);
}

void TestCli::saleStartFollowsTheLaunchRules()
{
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    const QStringList db{u"--db"_s, fresh.urlText(), u"--json"_s};
    QCOMPARE(cli(QStringList{u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"10"_s} + db).exitCode, 0);
    {
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(e);
        FS_VERIFY_OK((*e)->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
    }
    QCOMPARE(cli(QStringList{u"reconcile"_s, u"--grace"_s, u"0"_s, u"--unsafe-grace"_s} + db).exitCode, 3);
    const Run created = cli(QStringList{u"sale"_s, u"create"_s, u"--sku"_s, u"A"_s} + db);
    QCOMPARE(created.exitCode, 0);
    const QString sale = QString::number(created.json().value(u"sale"_s).toInteger());
    // The console's launch and `sale start` answer alike: a disputed book opens no sale.
    const Run start = cli(QStringList{u"sale"_s, u"start"_s, sale} + db);
    QCOMPARE(start.exitCode, 2);
    const QJsonObject error = start.json().value(u"error"_s).toObject();
    QCOMPARE(error.value(u"field"_s).toString(), u"sale"_s);
    QVERIFY2(error.value(u"message"_s).toString().contains(u"waits for approval"_s), qPrintable(start.out));
    const Run list = cli(QStringList{u"sale"_s, u"list"_s} + db);
    QCOMPARE(list.json().value(u"sales"_s).toArray().first().toObject().value(u"status"_s).toString(),
             u"scheduled"_s);
}

void TestCli::everyLoopsWriteToTheCommandStreams()
{
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    const QStringList db{u"--db"_s, fresh.urlText(), u"--json"_s};
    QCOMPARE(cli(QStringList{u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"10"_s} + db).exitCode, 0);
    QCOMPARE(cli(QStringList{u"reserve"_s, u"--order"_s, u"o1"_s, u"--sku"_s, u"A"_s, u"--qty"_s, u"2"_s} + db)
                 .exitCode,
             0);
    {
        // The hold is due, and units the ledger cannot explain wait for the reconciler.
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(e);
        FS_VERIFY_OK((*e)->database().exec(u"UPDATE orders SET expires_at = 0"_s));
    }
    // In-process: each run's line on the command's stream (it went to the process's stdout
    // before, out of a test's reach), then the summary.
    const Run expire = untilStopped(QStringList{u"expire"_s, u"--every"_s, u"1"_s} + db, 1500);
    QCOMPARE(expire.exitCode, 0);
    const QList<QJsonObject> runs = jsonLines(expire.out);
    QVERIFY2(runs.size() >= 2, qPrintable(expire.out));
    QCOMPARE(runs.first().value(u"released"_s).toInt(), 1);
    QCOMPARE(runs.first().value(u"units"_s).toInt(), 2);
    QCOMPARE(runs.last().value(u"stopped"_s).toBool(), true);
    QCOMPARE(runs.last().value(u"runs"_s).toInt(), runs.size() - 1);
    {
        // The loop is an expirer: its heartbeat is in the book, alive, with its interval.
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(e);
        const ExpiryStatus status = FS_OK((*e)->expiryStatus());
        QCOMPARE(status.expirers.size(), 1);
        QCOMPARE(status.expirers.first().kind, u"expire-every"_s);
        QCOMPARE(status.expirers.first().everyMs, 1000);
        QVERIFY(status.expirers.first().expirer.startsWith(u"expire-every@"_s));
        QCOMPARE(status.alive().size(), 1);
        QCOMPARE(status.overdueOrders, 0);
    }
    // A single `expire` is no expirer: it leaves no heartbeat of its own.
    QCOMPARE(cli(QStringList{u"expire"_s} + db).exitCode, 0);
    {
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(e);
        QCOMPARE(FS_OK((*e)->expiryStatus()).expirers.size(), 1);
    }

    {
        auto e = Engine::open(EngineOptions{fresh.url(), std::nullopt, Actor{u"tester"_s, u"test"_s}});
        FS_VERIFY_OK(e);
        FS_VERIFY_OK((*e)->database().exec(u"UPDATE buckets SET available = available + 5, total = total + 5"_s));
    }
    const Run reconcile = untilStopped(QStringList{u"reconcile"_s, u"--every"_s, u"1"_s, u"--grace"_s, u"0"_s, u"--unsafe-grace"_s} + db,
                                       1500);
    QCOMPARE(reconcile.exitCode, 3); // the last pass left one waiting for approval
    const QList<QJsonObject> passes = jsonLines(reconcile.out);
    QVERIFY2(passes.size() >= 2, qPrintable(reconcile.out));
    QCOMPARE(passes.first().value(u"discrepancies"_s).toArray().size(), 1);
    QCOMPARE(passes.first().value(u"still_pending"_s).toInt(), 1);
    QCOMPARE(passes.last().value(u"stopped"_s).toBool(), true);
    QCOMPARE(passes.last().value(u"passes"_s).toInt(), passes.size() - 1);
}

void TestCli::passwordLeavesTheCommandLine()
{
    // A long-running command given a password in a URL: other local users reading ps (its
    // /proc/PID/cmdline) never see it once the process is up; it says where it belongs.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QProcess p;
    p.start(QStringLiteral(FLASHSTOCK_CLI_PATH),
            {u"reconcile"_s, u"--every"_s, u"60"_s, u"--data-dir"_s, dir.path(), u"--redis"_s,
             u"redis://:s3cretpw@127.0.0.1:9/0"_s, u"--db"_s, u"sqlite:///"_s + dir.filePath(u"b.db"_s)});
    QVERIFY(p.waitForStarted());
    QByteArray err;
    QVERIFY(QTest::qWaitFor([&] { return (err += p.readAllStandardError()).contains("wiped"); }, 10000));
    QFile cmdline(u"/proc/%1/cmdline"_s.arg(p.processId()));
    QVERIFY(cmdline.open(QIODevice::ReadOnly));
    const QByteArray shown = cmdline.readAll();
    p.terminate();
    p.waitForFinished(10000);
    QVERIFY2(!shown.isEmpty() && !shown.contains("s3cretpw"), shown.constData());
    QVERIFY(shown.contains("redis://:********@127.0.0.1:9/0"));
}

void TestCli::passwordFromAPrivateFile()
{
    // A real PostgreSQL (scram-sha-256 over TCP) reached with the password in
    // --db-password-file, none in the URL or the environment; a file others may read is
    // refused with exit 2 before anything is opened.
    FS_FRESH_BOOK(fresh, u"postgresql"_s);
    QTemporaryDir dir;
    const QString file = dir.filePath(u"pg.pw"_s);
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(fresh.url().password.toUtf8() + '\n');
        QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
    }
    const QString bare = fresh.url().display();
    const QByteArray saved = qgetenv("PGPASSWORD");
    qunsetenv("PGPASSWORD");
    const auto restore = qScopeGuard([&] {
        if (!saved.isEmpty())
            qputenv("PGPASSWORD", saved);
    });
    const QStringList add{u"sku"_s, u"add"_s, u"A"_s, u"--stock"_s, u"5"_s, u"--json"_s, u"--db"_s, bare};
    QVERIFY(cli(add).exitCode != 0); // no password at all: authentication fails
    Run added = cli(add + QStringList{u"--db-password-file"_s, file});
    QVERIFY2(added.exitCode == 0, qPrintable(added.out + added.err));
    QVERIFY(QFile::setPermissions(file, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadOther));
    Run refused = cli(QStringList{u"sku"_s, u"show"_s, u"A"_s, u"--json"_s, u"--db"_s, bare, u"--db-password-file"_s,
                                  file});
    QCOMPARE(refused.exitCode, 2);
    const QJsonObject error = refused.json().value(u"error"_s).toObject();
    QCOMPARE(error.value(u"field"_s).toString(), u"db-password-file"_s);
    QVERIFY2(error.value(u"message"_s).toString().contains(u"chmod 600"_s), qPrintable(refused.out));
}

void TestCli::skuListTextAndJson()
{
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    const QStringList db{u"--db"_s, fresh.urlText()};
    const Run empty = cli(QStringList{u"sku"_s, u"list"_s} + db);
    QCOMPARE(empty.exitCode, 0);
    QVERIFY2(empty.out.contains(u"no SKUs yet"_s), qPrintable(empty.out));
    QCOMPARE(cli(QStringList{u"sku"_s, u"list"_s, u"--json"_s} + db).json().value(u"skus"_s).toArray().size(), 0);

    QCOMPARE(cli(QStringList{u"sku"_s, u"add"_s, u"MUG"_s, u"--stock"_s, u"50"_s} + db).exitCode, 0);
    QCOMPARE(cli(QStringList{u"sku"_s, u"add"_s, u"HOODIE"_s, u"--stock"_s, u"1000"_s, u"--buckets"_s, u"4"_s} + db)
                 .exitCode,
             0);
    QCOMPARE(cli(QStringList{u"reserve"_s, u"--order"_s, u"o1"_s, u"--sku"_s, u"MUG"_s, u"--qty"_s, u"3"_s} + db)
                 .exitCode,
             0);
    const Run json = cli(QStringList{u"sku"_s, u"list"_s, u"--json"_s} + db);
    QCOMPARE(json.exitCode, 0);
    const QJsonArray skus = json.json().value(u"skus"_s).toArray();
    QCOMPARE(skus.size(), 2);
    const QJsonObject hoodie = skus.at(0).toObject(), mug = skus.at(1).toObject(); // sorted by SKU
    QCOMPARE(hoodie.value(u"sku"_s).toString(), u"HOODIE"_s);
    QCOMPARE(hoodie.value(u"buckets"_s).toInt(), 4);
    QCOMPARE(hoodie.value(u"book"_s).toObject().value(u"total"_s).toInt(), 1000);
    QCOMPARE(mug.value(u"book"_s).toObject().value(u"available"_s).toInt(), 47);
    QCOMPARE(mug.value(u"book"_s).toObject().value(u"locked"_s).toInt(), 3);
    QVERIFY(mug.value(u"gate"_s).isNull()); // book-only
    const Run text = cli(QStringList{u"sku"_s, u"list"_s} + db);
    QCOMPARE(text.exitCode, 0);
    const QStringList lines = text.out.split(u'\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3); // the header, then one line per SKU
    QVERIFY2(lines.at(0).contains(u"available"_s) && lines.at(0).contains(u"buckets"_s), qPrintable(text.out));
    QVERIFY2(lines.at(2).startsWith(u"MUG"_s) && lines.at(2).contains(u"47"_s), qPrintable(text.out));
    QCOMPARE(cli(QStringList{u"sku"_s, u"list"_s, u"extra"_s} + db).exitCode, 2);
}

void TestCli::drillRefusesABookOrGateWithAnOpenSale()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    RedisFixture redis;
    QVERIFY2(redis.start(), qPrintable(redis.errorString()));
    FS_FRESH_BOOK(live, u"sqlite"_s);
    const QStringList liveTarget{u"--db"_s, live.urlText(), u"--redis"_s, redis.url().toString(), u"--json"_s};
    QCOMPARE(cliAsGiven(QStringList{u"sku"_s, u"add"_s, u"PHONE"_s, u"--stock"_s, u"100"_s} + liveTarget).exitCode, 0);
    QCOMPARE(cliAsGiven(QStringList{u"sale"_s, u"create"_s, u"--sku"_s, u"PHONE"_s} + liveTarget).exitCode, 0);
    QCOMPARE(cliAsGiven(QStringList{u"sale"_s, u"start"_s, u"1"_s} + liveTarget).exitCode, 0);
    const QStringList drill{u"drill"_s, u"--sku"_s, u"DRILL-1"_s, u"--stock"_s, u"5"_s, u"--buyers"_s, u"10"_s,
                            u"--faults"_s, u"none"_s};

    // The book with the open sale, through its gate or book-only: refused, naming the sale.
    for (const QStringList &target : {liveTarget, QStringList{u"--db"_s, live.urlText(), u"--json"_s}}) {
        const Run refused = cli(drill + target);
        QCOMPARE(refused.exitCode, 2);
        const QJsonObject error = refused.json().value(u"error"_s).toObject();
        QCOMPARE(error.value(u"field"_s).toString(), u"db"_s);
        const QString message = error.value(u"message"_s).toString();
        QVERIFY2(message.contains(u"sale 1 of PHONE is open"_s), qPrintable(message));
    }
    // Another book in front of the same gate: the gate's open sale refuses it too.
    FS_FRESH_BOOK(other, u"sqlite"_s);
    const Run viaGate = cliAsGiven(drill + QStringList{u"--db"_s, other.urlText(), u"--redis"_s, redis.url().toString(),
                                                       u"--json"_s});
    QCOMPARE(viaGate.exitCode, 2);
    const QJsonObject error = viaGate.json().value(u"error"_s).toObject();
    QCOMPARE(error.value(u"field"_s).toString(), u"redis"_s);
    QVERIFY2(error.value(u"message"_s).toString().contains(u"open sale of PHONE"_s), qPrintable(viaGate.out));
    // Nothing was created anywhere.
    for (const QString &book : {live.urlText(), other.urlText()}) {
        const QJsonArray skus = cli({u"sku"_s, u"list"_s, u"--json"_s, u"--db"_s, book}).json().value(u"skus"_s).toArray();
        for (const QJsonValue &sku : skus)
            QVERIFY(sku.toObject().value(u"sku"_s).toString() != u"DRILL-1"_s);
    }
    // Stopped, the sale no longer blocks a rehearsal there.
    QCOMPARE(cliAsGiven(QStringList{u"sale"_s, u"stop"_s, u"1"_s} + liveTarget).exitCode, 0);
    const Run ran = cliAsGiven(drill + liveTarget);
    QVERIFY2(ran.exitCode == 0, qPrintable(ran.out + ran.err));
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
#include "support/TestChecks.h"
