#include "support/BookFixture.h"
#include "support/TestChecks.h"

#include "store/Database.h"

#include <QAtomicInteger>
#include <QCoreApplication>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTest>
#include <QUuid>

using namespace Qt::StringLiterals;

namespace flashstock::test {

namespace {

/// Runs one statement as the server's superuser on its `postgres` database.
QString adminExec(const DbUrl &admin, const QString &sql)
{
    static QAtomicInteger<int> serial;
    const QString name = u"fs-test-admin-%1"_s.arg(serial.fetchAndAddRelaxed(1));
    QString error;
    {
        QSqlDatabase db = addPostgresConnection(admin, name);
        if (!db.open()) {
            error = db.lastError().text();
        } else {
            QSqlQuery q(db);
            if (!q.exec(sql))
                error = q.lastError().text();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return error;
}

} // namespace

QStringList bookBackends()
{
    return {u"sqlite"_s, u"postgresql"_s};
}

void addBackendRows()
{
    QTest::addColumn<QString>("backend");
    for (const QString &b : bookBackends())
        QTest::newRow(qPrintable(b)) << b;
}

FreshBook::FreshBook(const QString &backend)
{
    if (backend == u"sqlite"_s) {
        m_dir = std::make_unique<QTemporaryDir>();
        m_urlText = u"sqlite:///"_s + m_dir->filePath(u"book.db"_s);
        m_url = FS_OK(DbUrl::parse(m_urlText));
        return;
    }
    const QString admin = qEnvironmentVariable("FLASHSTOCK_TEST_PG_URL");
    if (admin.isEmpty()) {
        m_problem = u"FLASHSTOCK_TEST_PG_URL is not set: run the tests through scripts/with-test-servers.sh"_s;
        m_skip = !missingServerFails();
        return;
    }
    auto parsed = DbUrl::parse(admin);
    if (!parsed) {
        m_problem = parsed.error().message;
        return;
    }
    m_pgAdmin = *parsed;
    m_pgDatabase = u"fs_test_"_s + QUuid::createUuid().toString(QUuid::Id128).left(16);
    if (const QString e = adminExec(m_pgAdmin, u"CREATE DATABASE "_s + m_pgDatabase); !e.isEmpty()) {
        m_problem = u"cannot create test database: "_s + e;
        m_pgDatabase.clear();
        return;
    }
    m_url = m_pgAdmin.withDatabase(m_pgDatabase);
    m_urlText = u"postgresql://%1:%2@%3:%4/%5"_s.arg(m_url.user, m_url.password, m_url.hostList())
                    .arg(m_url.portList())
                    .arg(m_pgDatabase);
}

FreshBook::~FreshBook()
{
    if (!m_pgDatabase.isEmpty())
        adminExec(m_pgAdmin, u"DROP DATABASE IF EXISTS %1 WITH (FORCE)"_s.arg(m_pgDatabase));
}

QString FreshBook::setReachable(bool reachable)
{
    if (m_pgDatabase.isEmpty())
        return u"setReachable: only a PostgreSQL book can be cut off"_s;
    const QString allow = u"ALTER DATABASE %1 ALLOW_CONNECTIONS %2"_s.arg(m_pgDatabase, reachable ? u"true"_s : u"false"_s);
    if (const QString e = adminExec(m_pgAdmin, allow); !e.isEmpty() || reachable)
        return e;
    return adminExec(m_pgAdmin,
                     u"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%1'"_s.arg(m_pgDatabase));
}

BucketRowsHeld::BucketRowsHeld(const DbUrl &url, const QString &sku)
    : m_name(u"bucket-rows-held-"_s + QUuid::createUuid().toString(QUuid::WithoutBraces))
{
    QSqlDatabase db = addPostgresConnection(url, m_name);
    if (!db.open() || !db.transaction()) {
        m_problem = u"holder session: "_s + db.lastError().text();
        return;
    }
    QSqlQuery lock(db);
    lock.prepare(u"SELECT available FROM buckets WHERE sku = ? FOR UPDATE"_s);
    lock.addBindValue(sku);
    if (!lock.exec())
        m_problem = u"holder session: "_s + lock.lastError().text();
}

BucketRowsHeld::~BucketRowsHeld()
{
    {
        QSqlDatabase db = QSqlDatabase::database(m_name, false);
        if (db.isOpen())
            db.rollback();
        db.close();
    }
    QSqlDatabase::removeDatabase(m_name);
}

bool BucketRowsHeld::release()
{
    return QSqlDatabase::database(m_name, false).rollback();
}

} // namespace flashstock::test
