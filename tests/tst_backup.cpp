// Backup and restore of the book (docs/deployment.md, "Backup and restore of the book"): the real
// flashstock-cli takes the backup while a sale runs, the documented steps restore it into a
// fresh data dir and a fresh gate, and the invariants hold; on both books.

#include "Engine.h"
#include "drill/Drill.h"
#include "reconcile/Reconciler.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <thread>
#include <vector>

#include <sys/stat.h>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// What one run of the real flashstock-cli gave.
struct CliRun {
    int exitCode = -1;
    QJsonObject json; ///< stdout, parsed (every run here passes --json)
    QString err;
};

/// Runs flashstock-cli with `args` and `--json`, with `env` (the PostgreSQL password goes in
/// PGPASSWORD there, never on the command line).
CliRun runCli(QStringList args, const QProcessEnvironment &env)
{
    QProcess cli;
    cli.setProcessEnvironment(env);
    args << u"--json"_s;
    cli.start(QStringLiteral(FLASHSTOCK_CLI_PATH), args);
    CliRun run;
    if (!cli.waitForStarted(10000) || !cli.waitForFinished(300000)) {
        run.err = u"flashstock-cli did not run: "_s + cli.errorString();
        cli.kill();
        cli.waitForFinished(5000);
        return run;
    }
    run.exitCode = cli.exitStatus() == QProcess::NormalExit ? cli.exitCode() : -1;
    run.json = QJsonDocument::fromJson(cli.readAllStandardOutput()).object();
    run.err = QString::fromLocal8Bit(cli.readAllStandardError());
    return run;
}

/// The environment of a CLI run on `book`: its password, if any, in PGPASSWORD.
QProcessEnvironment envFor(const DbUrl &book)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!book.password.isEmpty())
        env.insert(u"PGPASSWORD"_s, book.password);
    return env;
}

QString redisArg(const RedisFixture &redis)
{
    return u"redis://127.0.0.1:%1"_s.arg(redis.port());
}

/// Files in `dir` other than `keep`.
QStringList othersIn(const QString &dir, const QStringList &keep)
{
    QStringList out = QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::System);
    for (const QString &k : keep)
        out.removeAll(k);
    return out;
}

/// Buyers on their own engines (one thread each), reserving one unit of `sku` per order and
/// paying every third, until stopped: the sale in flight while a backup is taken.
class Crowd {
public:
    Crowd(const DbUrl &book, const RedisUrl &gate, const QString &sku, int buyers)
    {
        for (int b = 0; b < buyers; ++b)
            m_threads.emplace_back([this, book, gate, sku, b] {
                auto engine = test::openEngine(book, gate);
                if (!engine)
                    return;
                for (int i = 0; !m_stop.load(); ++i) {
                    const QString order = u"crowd-%1-%2"_s.arg(b).arg(i);
                    auto r = engine->reserve(order, u"buyer-%1-%2"_s.arg(b).arg(i), {{sku, 1, {}}});
                    if (r && r->outcome == Outcome::Reserved && i % 3 == 0)
                        (void)engine->confirm(order, u"pay-"_s + order);
                    m_done.fetchAndAddRelaxed(1);
                }
            });
    }
    ~Crowd() { stop(); }
    /// Orders tried so far.
    int done() const { return m_done.loadRelaxed(); }
    void stop()
    {
        m_stop = true;
        for (std::thread &t : m_threads)
            if (t.joinable())
                t.join();
    }

private:
    std::atomic<bool> m_stop{false};
    QAtomicInt m_done;
    std::vector<std::thread> m_threads;
};

} // namespace

class TestBackup : public QObject {
    Q_OBJECT

private slots:
    void restoreMidSale_data() { test::addBackendRows(); }
    void restoreMidSale();
    void refusesToOverwrite();
    void refusesTheBookItself();
    void truncatedDumpRefused();
};

void TestBackup::restoreMidSale()
{
    QFETCH(QString, backend);
    FS_GATED_ENGINE(backend);
    const QString hot = u"HOT"_s, cold = u"COLD"_s;
    FS_VERIFY_OK(engine->addSku(hot, 100000));
    FS_VERIFY_OK(engine->addSku(cold, 50));
    auto sale = engine->createSale(hot, 0, 0, 600, 0);
    FS_VERIFY_OK(sale);
    FS_VERIFY_OK(engine->setSaleStatus(sale->id, SaleStatus::Open));
    // Before the backup: holds, payments and a release on both SKUs.
    for (int i = 0; i < 30; ++i) {
        const QString order = u"early-%1"_s.arg(i);
        const QString sku = i % 5 == 0 ? cold : hot;
        QCOMPARE(FS_OK(engine->reserve(order, u"early-buyer-%1"_s.arg(i), {{sku, 1 + i % 3, {}}})).outcome,
                 Outcome::Reserved);
        if (i % 3 == 0)
            QCOMPARE(FS_OK(engine->confirm(order, u"pay-"_s + order)).outcome, Outcome::Paid);
        else if (i % 7 == 0)
            QCOMPARE(FS_OK(engine->release(order, u"cancel"_s)).outcome, Outcome::Released);
    }
    const qint64 ledgerBefore = FS_OK(engine->book().ledgerCount());

    // The backup, taken by the real CLI while a crowd reserves and pays.
    QTemporaryDir backups;
    QVERIFY(backups.isValid());
    const QString file = backups.filePath(u"book.backup"_s);
    CliRun backup;
    {
        Crowd crowd(fresh.url(), redis.url(), hot, 4);
        QTRY_VERIFY_WITH_TIMEOUT(crowd.done() >= 20, 60000);
        backup = runCli({u"--db"_s, fresh.url().display(), u"--redis"_s, u"none"_s, u"backup"_s, file}, envFor(fresh.url()));
        const int atEnd = crowd.done();
        QTRY_VERIFY_WITH_TIMEOUT(crowd.done() >= atEnd + 20, 60000);
    }
    QVERIFY2(backup.exitCode == 0, qPrintable(backup.err));
    QCOMPARE(backup.json.value(u"file"_s).toString(), QFileInfo(file).absoluteFilePath());
    QCOMPARE(QFileInfo(file).permissions() & (QFile::ReadGroup | QFile::WriteGroup | QFile::ReadOther | QFile::WriteOther),
             QFile::Permissions());
    QVERIFY(backup.json.value(u"tables"_s).toArray().contains(u"ledger"_s));
    QCOMPARE(othersIn(backups.path(), {u"book.backup"_s}), QStringList());
    const qint64 ledgerAfter = FS_OK(engine->book().ledgerCount());

    // The restore, as docs/operations.md says: the file into a fresh data dir (SQLite) or an
    // empty database (pg_restore), a fresh gate, then gate rebuild --all.
    QTemporaryDir dataDir;
    QVERIFY(dataDir.isValid());
    std::optional<test::FreshBook> restoredPg;
    DbUrl restoredUrl;
    QStringList bookArgs;
    if (backend == u"sqlite"_s) {
        const QString path = dataDir.filePath(u"flashstock.db"_s);
        QVERIFY(QFile::copy(file, path));
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner));
        restoredUrl.dialect = Dialect::Sqlite;
        restoredUrl.path = path;
    } else {
        restoredPg.emplace(backend);
        QVERIFY2(restoredPg->problem().isEmpty(), qPrintable(restoredPg->problem()));
        restoredUrl = restoredPg->url();
        QProcess restore;
        restore.setProcessEnvironment(envFor(restoredUrl));
        restore.start(u"pg_restore"_s, {u"--no-owner"_s, u"--dbname="_s + restoredUrl.display(), file});
        QVERIFY(restore.waitForFinished(120000));
        QVERIFY2(restore.exitCode() == 0, restore.readAllStandardError().constData());
        bookArgs = {u"--db"_s, restoredUrl.display()};
    }
    RedisFixture gate;
    QVERIFY2(gate.start(), qPrintable(gate.errorString()));
    const CliRun rebuilt = runCli(QStringList{u"--data-dir"_s, dataDir.path()} + bookArgs
                                      + QStringList{u"--redis"_s, redisArg(gate), u"gate"_s, u"rebuild"_s, u"--all"_s},
                                  envFor(restoredUrl));
    QVERIFY2(rebuilt.exitCode == 0, qPrintable(rebuilt.err));
    QCOMPARE(rebuilt.json.value(u"rebuilt"_s).toArray().size(), 2);

    auto restored = test::openEngine(restoredUrl, gate.url());
    QVERIFY(restored);
    // Everything committed before the backup began is in it, nothing after the crowd stopped.
    const qint64 ledgerRestored = FS_OK(restored->book().ledgerCount());
    QVERIFY2(ledgerRestored >= ledgerBefore + 20 && ledgerRestored <= ledgerAfter,
             qPrintable(u"restored %1 ledger rows; %2 before the crowd, %3 after it"_s.arg(ledgerRestored)
                            .arg(ledgerBefore)
                            .arg(ledgerAfter)));
    const SkuLevels levels = FS_OK(restored->book().levels(hot));
    QVERIFY2(levels.locked > 0 && levels.sold > 0, "the backup holds the sale mid-way: holds and payments");
    auto invariantsHold = [&] {
        if (!test::bookHolds(*restored)) // I1-I4, I6
            return false;
        for (const QString &sku : {hot, cold}) { // I5
            const GateAgreement agrees = checkGateAgreesWithBook(*restored, sku);
            if (!agrees.holds) {
                qWarning("%s", qPrintable(agrees.detail));
                return false;
            }
        }
        return true;
    };
    QVERIFY(invariantsHold());

    // The sale goes on from the restored book: a new buyer, and a hold from before the
    // backup given back (its token is the old gate's: the reconcile pass raises the new gate).
    QCOMPARE(FS_OK(restored->reserve(u"after-restore"_s, u"late-buyer"_s, {{hot, 2, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(restored->release(u"early-1"_s, u"timeout"_s)).outcome, Outcome::Released);
    Reconciler reconciler(*restored);
    FS_VERIFY_OK(reconciler.runPass(0));
    QVERIFY(invariantsHold());
}

void TestBackup::refusesToOverwrite()
{
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    {
        auto engine = test::openEngine(fresh.url());
        QVERIFY(engine);
        FS_VERIFY_OK(engine->addSku(u"A"_s, 5));
    }
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(u"existing"_s);
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("keep me");
    }
    const mode_t before = ::umask(022); // a backup is private whatever the umask
    auto restoreUmask = qScopeGuard([before] { ::umask(before); });
    const QStringList args{u"--db"_s, fresh.urlText(), u"--redis"_s, u"none"_s, u"backup"_s, file};
    const CliRun refused = runCli(args, envFor(fresh.url()));
    QCOMPARE(refused.exitCode, 2);
    QCOMPARE(refused.json.value(u"error"_s).toObject().value(u"field"_s).toString(), u"file"_s);
    QFile kept(file);
    QVERIFY(kept.open(QIODevice::ReadOnly));
    QCOMPARE(kept.readAll(), QByteArray("keep me"));
    kept.close();

    const CliRun replaced = runCli(args + QStringList{u"--overwrite"_s}, envFor(fresh.url()));
    QVERIFY2(replaced.exitCode == 0, qPrintable(replaced.err));
    QVERIFY(kept.open(QIODevice::ReadOnly));
    QVERIFY(kept.read(16).startsWith("SQLite format 3"));
    QCOMPARE(QFileInfo(file).permissions() & (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther),
             QFile::Permissions());
    QCOMPARE(replaced.json.value(u"skus"_s).toInt(), 1);
    QCOMPARE(othersIn(dir.path(), {u"existing"_s}), QStringList());

    const CliRun nowhere = runCli({u"--db"_s, fresh.urlText(), u"--redis"_s, u"none"_s, u"backup"_s,
                                   dir.filePath(u"no-such-dir/b.db"_s)},
                                  envFor(fresh.url()));
    QCOMPARE(nowhere.exitCode, 2);
    QCOMPARE(nowhere.json.value(u"error"_s).toObject().value(u"field"_s).toString(), u"file"_s);
}

void TestBackup::refusesTheBookItself()
{
    FS_FRESH_BOOK(fresh, u"sqlite"_s);
    auto engine = test::openEngine(fresh.url());
    QVERIFY(engine);
    FS_VERIFY_OK(engine->addSku(u"A"_s, 5));
    const qint64 rows = FS_OK(engine->book().ledgerCount());
    for (const QString &target : {fresh.url().path, fresh.url().path + u"-wal"_s}) {
        const CliRun r = runCli({u"--db"_s, fresh.urlText(), u"--redis"_s, u"none"_s, u"backup"_s, target,
                                 u"--overwrite"_s},
                                envFor(fresh.url()));
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.json.value(u"error"_s).toObject().value(u"message"_s).toString().contains(u"the book itself"_s),
                 qPrintable(r.err));
    }
    QCOMPARE(FS_OK(engine->book().ledgerCount()), rows);
    QVERIFY(test::bookHolds(*engine));
}

void TestBackup::truncatedDumpRefused()
{
    // A dump cut short (a disk that fills up, a pg_dump killed half-way) is a fault the real
    // pg_dump cannot be made to show here: a pg_dump on PATH runs the real one, then cuts the
    // last 64 bytes (the end of its data) off its archive, which pg_restore --list still
    // reads. The check must refuse it and leave nothing behind.
    FS_FRESH_BOOK(fresh, u"postgresql"_s);
    {
        auto engine = test::openEngine(fresh.url());
        QVERIFY(engine);
        FS_VERIFY_OK(engine->addSku(u"A"_s, 5));
        for (int i = 0; i < 200; ++i)
            FS_VERIFY_OK(engine->reserve(u"o-%1"_s.arg(i), {}, {{u"A"_s, 1, {}}}));
    }
    const QString realDump = QStandardPaths::findExecutable(u"pg_dump"_s);
    QVERIFY2(!realDump.isEmpty(), "pg_dump is not installed (postgresql-client)");
    QTemporaryDir tools;
    QVERIFY(tools.isValid());
    QFile fake(tools.filePath(u"pg_dump"_s));
    QVERIFY(fake.open(QIODevice::WriteOnly));
    fake.write("#!/bin/sh\n\"" + realDump.toLocal8Bit()
               + "\" \"$@\" || exit $?\n"
                 "for a in \"$@\"; do case \"$a\" in --file=*) f=${a#--file=};; esac; done\n"
                 "truncate -s -64 \"$f\"\n");
    fake.close();
    QVERIFY(fake.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    QProcessEnvironment env = envFor(fresh.url());
    env.insert(u"PATH"_s, tools.path() + u':' + env.value(u"PATH"_s));

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(u"cut.dump"_s);
    const CliRun r = runCli({u"--db"_s, fresh.url().display(), u"--redis"_s, u"none"_s, u"backup"_s, file}, env);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.json.value(u"error"_s).toObject().value(u"message"_s).toString().contains(u"failed its check"_s),
             qPrintable(r.err));
    QCOMPARE(othersIn(dir.path(), {}), QStringList());

    // The same book through the real pg_dump passes.
    const CliRun ok = runCli({u"--db"_s, fresh.url().display(), u"--redis"_s, u"none"_s, u"backup"_s, file},
                             envFor(fresh.url()));
    QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));
    QCOMPARE(ok.json.value(u"tool"_s).toString(), u"pg_dump"_s);
}

QTEST_GUILESS_MAIN(TestBackup)
#include "tst_backup.moc"
