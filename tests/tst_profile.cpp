// The one way to open an engine from a profile (core/open): the defaults every binary
// shares, passwords from the environment, bad input found before anything is created, and
// the one rule for an embedded redis-server that does not start (configured and down,
// never book-only by accident).

#include "Engine.h"
#include "gate/EmbeddedRedis.h"
#include "gate/Gate.h"
#include "open/EngineOpener.h"
#include "store/SaleStore.h"
#include "support/RedisFixture.h"
#include "support/TestChecks.h"

#include <QDir>
#include <QFileInfo>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace flashstock;

class TestProfile : public QObject {
    Q_OBJECT
private slots:
    void init()
    {
        qunsetenv("FLASHSTOCK_DATA_DIR");
        qunsetenv("FLASHSTOCK_REDIS_PASSWORD");
        qunsetenv("PGPASSWORD");
    }
    void cleanup() { init(); }

    void defaultsComeFromTheEnvironmentAndCreateNothing();
    void givenDataDirWins();
    void redisPasswordFromEnvironment_data();
    void redisPasswordFromEnvironment();
    void redisPasswordOnlyWhereItBelongs();
    void passwordsFromFiles();
    void passwordFileMustBePrivate_data();
    void passwordFileMustBePrivate();
    void badInputNamesTheFieldAndCreatesNothing_data();
    void badInputNamesTheFieldAndCreatesNothing();
    void readsNeverStartARedisServer();
    void dataDirIsOursAlone();
    void embeddedThatFailsIsDownNotAbsent();
    void embeddedIsStartedThenReused();
};

void TestProfile::defaultsComeFromTheEnvironmentAndCreateNothing()
{
    QTemporaryDir tmp;
    const QString data = tmp.filePath(u"data"_s);
    qputenv("FLASHSTOCK_DATA_DIR", data.toUtf8());
    QCOMPARE(EngineProfile::dataDirFor({}), data);
    const ResolvedProfile p = FS_OK(EngineOpener::resolve({}));
    QCOMPARE(p.dataDir, data);
    QVERIFY(p.bookInDataDir);
    QCOMPARE(p.book.dialect, Dialect::Sqlite);
    QCOMPARE(p.book.path, QDir(data).absoluteFilePath(u"flashstock.db"_s));
    QCOMPARE(p.gateMode, GateMode::Embedded);
    QVERIFY(p.gate.has_value());
    QCOMPARE(p.gate->socketPath, EmbeddedRedis(data).socketPath());
    QVERIFY(p.gate->password.isEmpty()); // the embedded server has no password
    QCOMPARE(p.operatorName, EngineProfile::osUserName());
    QCOMPARE(EngineProfile::settingsFile(data), QDir(data).absoluteFilePath(u"flashstock.ini"_s));
    QVERIFY2(!QFileInfo::exists(data), "resolving created the data dir");
    qunsetenv("FLASHSTOCK_DATA_DIR");
    QVERIFY(EngineProfile::dataDirFor({}).endsWith(u"/flashstock"_s)); // $XDG_DATA_HOME/flashstock
}

void TestProfile::givenDataDirWins()
{
    qputenv("FLASHSTOCK_DATA_DIR", "/from/the/environment");
    QCOMPARE(EngineProfile::dataDirFor(u"/given"_s), u"/given"_s);
    const ResolvedProfile p = FS_OK(EngineOpener::resolve({u"/given"_s, u"sqlite:////elsewhere/book.db"_s, u"none"_s,
                                                           u"ops"_s}));
    QCOMPARE(p.dataDir, u"/given"_s);
    QVERIFY(!p.bookInDataDir);
    QCOMPARE(p.book.path, u"/elsewhere/book.db"_s);
    QCOMPARE(p.gateMode, GateMode::BookOnly);
    QVERIFY(!p.gate);
    QCOMPARE(p.operatorName, u"ops"_s);
}

namespace {

/// The gate of a profile on `url` (data dir /d, operator ops), resolved.
std::optional<RedisUrl> gateOf(const QString &url)
{
    return FS_OK(EngineOpener::resolve({u"/d"_s, {}, url, u"ops"_s})).gate;
}

} // namespace

void TestProfile::redisPasswordFromEnvironment_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("password");
    QTest::addColumn<QString>("user");
    QTest::addRow("no password") << u"redis://cache:6379/0"_s << u"from-env"_s << QString();
    QTest::addRow("user, no password") << u"redis://app@cache:6379"_s << u"from-env"_s << u"app"_s;
    QTest::addRow("unix socket") << u"unix:///run/redis.sock?db=2"_s << u"from-env"_s << QString();
    QTest::addRow("its own") << u"redis://:mine@cache:6379"_s << u"mine"_s << QString();
    QTest::addRow("cluster, no password") << u"redis-cluster://h1:7000,h2:7001"_s << u"from-env"_s << QString();
    QTest::addRow("cluster, user, no password") << u"redis-cluster://app@h1:7000,h2:7001?wait=1"_s << u"from-env"_s
                                                << u"app"_s;
    QTest::addRow("cluster, its own") << u"redis-cluster://:mine@h1:7000,h2:7001"_s << u"mine"_s << QString();
}

void TestProfile::redisPasswordFromEnvironment()
{
    // A gate URL that names no password gets FLASHSTOCK_REDIS_PASSWORD, in every binary.
    QFETCH(QString, url);
    QFETCH(QString, password);
    QFETCH(QString, user);
    qputenv("FLASHSTOCK_REDIS_PASSWORD", "from-env");
    const auto gate = gateOf(url);
    QVERIFY(gate.has_value());
    QCOMPARE(gate->password, password);
    QCOMPARE(gate->user, user);
}

void TestProfile::redisPasswordOnlyWhereItBelongs()
{
    qputenv("FLASHSTOCK_REDIS_PASSWORD", "from-env");
    QVERIFY(!gateOf(u"none"_s));                    // book-only: no gate to give it to
    QVERIFY(gateOf(QString())->password.isEmpty()); // the embedded server: none either
    qunsetenv("FLASHSTOCK_REDIS_PASSWORD");
    QVERIFY(gateOf(u"redis://cache:6379/0"_s)->password.isEmpty());
}

namespace {

/// Writes `content` to `path` with `mode`.
bool writeFile(const QString &path, const QByteArray &content, QFileDevice::Permissions mode)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(content) == content.size() && f.setPermissions(mode);
}

const QFileDevice::Permissions kOwnerOnly = QFileDevice::ReadOwner | QFileDevice::WriteOwner;

} // namespace

void TestProfile::passwordsFromFiles()
{
    // --db-password-file / --redis-password-file (every binary: the profile): the first line
    // of a private file, over the environment; a URL's own password still wins.
    QTemporaryDir tmp;
    QVERIFY(writeFile(tmp.filePath(u"pg"_s), "pg-from-file\nignored\n", kOwnerOnly));
    QVERIFY(writeFile(tmp.filePath(u"redis"_s), "redis-from-file\r\n", QFileDevice::ReadOwner));
    qputenv("PGPASSWORD", "pg-from-env");
    qputenv("FLASHSTOCK_REDIS_PASSWORD", "redis-from-env");
    EngineProfile profile;
    profile.dataDir = tmp.filePath(u"data"_s);
    profile.dbUrl = u"postgresql://app@db.example:5432/book"_s;
    profile.redisUrl = u"redis://cache:6379/0"_s;
    QCOMPARE(FS_OK(EngineOpener::resolve(profile)).book.password, u"pg-from-env"_s);
    QCOMPARE(FS_OK(EngineOpener::resolve(profile)).gate->password, u"redis-from-env"_s);
    QVERIFY(profile.setPasswordFile(u"db-password-file"_s, tmp.filePath(u"pg"_s)));
    QVERIFY(profile.setPasswordFile(u"redis-password-file"_s, tmp.filePath(u"redis"_s)));
    QVERIFY(!profile.setPasswordFile(u"db"_s, tmp.filePath(u"pg"_s)));
    const ResolvedProfile r = FS_OK(EngineOpener::resolve(profile));
    QCOMPARE(r.book.password, u"pg-from-file"_s);
    QCOMPARE(r.gate->password, u"redis-from-file"_s);
    profile.dbUrl = u"postgresql://app:inline@db.example:5432/book"_s;
    QCOMPARE(FS_OK(EngineOpener::resolve(profile)).book.password, u"inline"_s);
    // The cluster and unix forms take it too.
    profile.redisUrl = u"redis-cluster://h1:7000,h2:7001"_s;
    QCOMPARE(FS_OK(EngineOpener::resolve(profile)).gate->password, u"redis-from-file"_s);
    profile.redisUrl = u"unix:///run/redis.sock"_s;
    QCOMPARE(FS_OK(EngineOpener::resolve(profile)).gate->password, u"redis-from-file"_s);
}

void TestProfile::passwordFileMustBePrivate_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("why");
    QTest::addRow("group-readable") << u"shared"_s << u"chmod 600"_s;
    QTest::addRow("world-readable") << u"world"_s << u"chmod 600"_s;
    QTest::addRow("a directory") << u"dir"_s << u"not a regular file"_s;
    QTest::addRow("missing") << u"missing"_s << u"does not exist"_s;
    QTest::addRow("empty") << u"empty"_s << u"holds no secret"_s;
}

void TestProfile::passwordFileMustBePrivate()
{
    // A password file others can read, or that is no file, is refused with InvalidArgument
    // (exit 2) naming the option, before anything is opened or created.
    QFETCH(QString, file);
    QFETCH(QString, why);
    QTemporaryDir tmp;
    QVERIFY(writeFile(tmp.filePath(u"shared"_s), "pw\n", kOwnerOnly | QFileDevice::ReadGroup));
    QVERIFY(writeFile(tmp.filePath(u"world"_s), "pw\n", kOwnerOnly | QFileDevice::ReadOther));
    QVERIFY(writeFile(tmp.filePath(u"empty"_s), "\n", kOwnerOnly));
    QVERIFY(QDir(tmp.path()).mkdir(u"dir"_s));
    for (const QString &option : {u"db-password-file"_s, u"redis-password-file"_s}) {
        EngineProfile profile;
        profile.dataDir = tmp.filePath(u"data"_s);
        profile.dbUrl = u"postgresql://app@db.example:5432/book"_s;
        profile.redisUrl = u"redis://cache:6379/0"_s;
        QVERIFY(profile.setPasswordFile(option, tmp.filePath(file)));
        auto r = EngineOpener::resolve(profile);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
        QCOMPARE(r.error().field, option);
        QVERIFY2(r.error().message.contains(why), qPrintable(r.error().message));
        QVERIFY(!QFileInfo::exists(profile.dataDir));
    }
}

void TestProfile::badInputNamesTheFieldAndCreatesNothing_data()
{
    QTest::addColumn<QString>("db");
    QTest::addColumn<QString>("redis");
    QTest::addColumn<QString>("operatorName");
    QTest::addColumn<QString>("field");
    QTest::addRow("db") << u"mysql://x"_s << QString() << u"ops"_s << u"db"_s;
    QTest::addRow("redis") << QString() << u"redis://host:99999"_s << u"ops"_s << u"redis"_s;
    QTest::addRow("operator") << QString() << QString() << u"bad\tname"_s << u"operator"_s;
}

void TestProfile::badInputNamesTheFieldAndCreatesNothing()
{
    QFETCH(QString, db);
    QFETCH(QString, redis);
    QFETCH(QString, operatorName);
    QFETCH(QString, field);
    QTemporaryDir tmp;
    const QString data = tmp.filePath(u"data"_s);
    auto resolved = EngineOpener::resolve({data, db, redis, operatorName});
    QVERIFY(!resolved);
    QCOMPARE(resolved.error().code, ErrorCode::InvalidArgument);
    QCOMPARE(resolved.error().field, field);
    QVERIFY(!QFileInfo::exists(data));
}

void TestProfile::readsNeverStartARedisServer()
{
    QTemporaryDir tmp;
    const QString data = tmp.filePath(u"data"_s);
    const ResolvedProfile p = FS_OK(EngineOpener::resolve({data, {}, {}, u"ops"_s}));
    auto opened = EngineOpener::open(p, u"test"_s, GateNeed::BookIsEnough);
    FS_VERIFY_OK(opened);
    QVERIFY(!opened->engine->gate());
    QVERIFY(!opened->gate.attached);
    QVERIFY(QFileInfo(data).isDir()); // the book lives there
    QCOMPARE(QFileInfo(data).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther), QFileDevice::Permissions());
    QVERIFY(!EmbeddedRedis(data).status().processAlive);
    QVERIFY(!QFileInfo::exists(EmbeddedRedis(data).socketPath()));
    // Book-only asks for no gate at all, whatever the caller needs.
    auto none = EngineOpener::open(FS_OK(EngineOpener::resolve({data, {}, u"none"_s, u"ops"_s})), u"test"_s);
    FS_VERIFY_OK(none);
    QVERIFY(!none->engine->gate());
    QCOMPARE(none->gate.mode, GateMode::BookOnly);
}

void TestProfile::dataDirIsOursAlone()
{
    // A data dir (or book) that is a symlink, foreign or writable by others is refused and
    // left as it was; what FlashStock creates is the user's alone.
    QTemporaryDir tmp;
    auto refused = [&](const QString &data, const QString &db, const QString &field) {
        auto opened = EngineOpener::open(FS_OK(EngineOpener::resolve({data, db, u"none"_s, u"ops"_s})), u"test"_s);
        if (opened) {
            qWarning("%s opened", qPrintable(data + db));
            return false;
        }
        qInfo("%s", qPrintable(opened.error().message));
        return opened.error().code == ErrorCode::InvalidArgument && opened.error().field == field;
    };
    const QString shared = tmp.filePath(u"shared"_s);
    QVERIFY(QDir().mkdir(shared));
    QVERIFY(::chmod(QFile::encodeName(shared).constData(), 01777) == 0); // like /tmp
    QVERIFY(refused(shared, {}, u"data-dir"_s));
    struct stat st {};
    QVERIFY(::stat(QFile::encodeName(shared).constData(), &st) == 0);
    QCOMPARE(st.st_mode & 07777, mode_t(01777)); // never chmod'ed, the sticky bit kept
    QVERIFY(!QFileInfo::exists(shared + u"/flashstock.db"_s));

    const QString real = tmp.filePath(u"real"_s), link = tmp.filePath(u"link"_s);
    QVERIFY(QDir().mkdir(real) && QFile::link(real, link));
    QVERIFY(refused(link, {}, u"data-dir"_s));
    QVERIFY(QFile::link(tmp.filePath(u"elsewhere.db"_s), tmp.filePath(u"book-link.db"_s)));
    QVERIFY(refused(tmp.filePath(u"data"_s), u"sqlite:///"_s + tmp.filePath(u"book-link.db"_s), u"db"_s));
    if (::geteuid() == 0) { // as root (CI), a directory of another user
        QVERIFY(::chown(QFile::encodeName(real).constData(), 65534, 65534) == 0);
        QVERIFY(refused(real, {}, u"data-dir"_s));
    }

    // A book created outside the data dir: 0600, as is its WAL.
    const QString book = tmp.filePath(u"outside.db"_s);
    auto opened = EngineOpener::open(
        FS_OK(EngineOpener::resolve({tmp.filePath(u"data"_s), u"sqlite:///"_s + book, u"none"_s, u"ops"_s})), u"test"_s);
    FS_VERIFY_OK(opened);
    FS_VERIFY_OK(opened->engine->addSku(u"A"_s, 1));
    for (const QString &file : {book, book + u"-wal"_s}) {
        if (!QFileInfo::exists(file))
            continue;
        QVERIFY(::stat(QFile::encodeName(file).constData(), &st) == 0);
        QCOMPARE(st.st_mode & 0777, mode_t(0600));
    }
}

void TestProfile::embeddedThatFailsIsDownNotAbsent()
{
    // A data dir whose socket path is too long for a unix socket: the book opens, the
    // embedded redis-server cannot start.
    QTemporaryDir tmp;
    const QString data = tmp.filePath(QString(120, u'd'));
    auto opened = EngineOpener::open(FS_OK(EngineOpener::resolve({data, {}, {}, u"ops"_s})), u"test"_s);
    FS_VERIFY_OK(opened);
    QVERIFY2(!opened->gate.problem.isEmpty(), "the reason must be reported");
    QVERIFY2(opened->gate.problem.contains(u"too long"_s), qPrintable(opened->gate.problem));
    QVERIFY(opened->gate.attached);
    Engine &engine = *opened->engine;
    QVERIFY(engine.gate()); // configured and down, never book-only by accident
    FS_VERIFY_OK(engine.addSku(u"A"_s, 5)); // the book works
    QCOMPARE(FS_OK(engine.reserve(u"o1"_s, u"u1"_s, {{u"A"_s, 1, {}}})).outcome, Outcome::GateUnavailable);
    QCOMPARE(FS_OK(engine.book().levels(u"A"_s)).available, 5);
    auto sale = engine.createSale(u"A"_s, 0, 0, 60, 0);
    FS_VERIFY_OK(sale);
    QVERIFY2(!engine.setSaleStatus(sale->id, SaleStatus::Open), "a sale must not open while its gate is down");
    QCOMPARE(FS_OK(engine.sales().get(sale->id)).status, SaleStatus::Scheduled);
}

void TestProfile::embeddedIsStartedThenReused()
{
    FLASHSTOCK_REQUIRE_REDIS_SERVER();
    QTemporaryDir tmp;
    const QString data = tmp.filePath(u"data"_s);
    const ResolvedProfile p = FS_OK(EngineOpener::resolve({data, {}, {}, u"ops"_s}));
    auto stop = qScopeGuard([&] { FS_VERIFY_OK(EmbeddedRedis(data).stop()); });
    auto first = EngineOpener::open(p, u"test"_s);
    FS_VERIFY_OK(first);
    QVERIFY(first->gate.problem.isEmpty());
    QVERIFY(first->gate.startedNow);
    FS_VERIFY_OK(first->engine->addSku(u"A"_s, 3));
    auto second = EngineOpener::open(p, u"test"_s);
    FS_VERIFY_OK(second);
    QVERIFY(!second->gate.startedNow); // reused
    QCOMPARE(second->engine->gateLevels(u"A"_s).available, 3);
}

QTEST_GUILESS_MAIN(TestProfile)
#include "tst_profile.moc"
