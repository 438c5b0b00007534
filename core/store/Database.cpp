#include "store/Database.h"

#include "Identifiers.h"
#include "store/BookSql.h"

#include <QAtomicInteger>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlRecord>
#include <QThread>

#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// A libpq conninfo value in single quotes, a backslash before each \ and '.
QString conninfoQuoted(const QString &value)
{
    QString out = value;
    out.replace(u"\\"_s, u"\\\\"_s).replace(u"'"_s, u"\\'"_s);
    return u"'"_s + out + u"'"_s;
}

} // namespace

QSqlDatabase addPostgresConnection(const DbUrl &url, const QString &name, const QString &applicationName)
{
    QSqlDatabase db = QSqlDatabase::addDatabase(u"QPSQL"_s, name);
    // Several servers: libpq takes `host` and `port` as lists and tries them in turn.
    db.setHostName(url.hostList());
    if (url.hosts.size() == 1)
        db.setPort(url.hosts.constFirst().port);
    db.setUserName(url.user);
    db.setPassword(url.password);
    db.setDatabaseName(url.database);
    // Every statement planned for the parameters and table sizes of its own run: the book
    // starts empty and grows by thousands of rows a second, and a generic plan PostgreSQL
    // cached while a table was empty (its default after five runs of a prepared statement)
    // stays a sequential scan of it until the next ANALYZE; the existing-orders look-up of
    // every batch paid 9-12 ms that way at 18 000 orders.
    QString sessionOptions = u"-c plan_cache_mode=force_custom_plan"_s;
    if (const auto theirs = url.parameter(u"options"_s))
        sessionOptions += u' ' + *theirs;
    QStringList options{u"connect_timeout="_s + url.parameter(u"connect_timeout"_s).value_or(u"5"_s),
                        u"application_name="_s + conninfoQuoted(url.parameter(u"application_name"_s).value_or(applicationName)),
                        u"options="_s + conninfoQuoted(sessionOptions)};
    if (url.hosts.size() > 1)
        options << u"port="_s + url.portList();
    for (const auto &[key, value] : url.parameters)
        if (key != u"connect_timeout"_s && key != u"application_name"_s && key != u"options"_s)
            options << key + u'=' + conninfoQuoted(value);
    db.setConnectOptions(options.join(u';'));
    return db;
}

namespace {

QAtomicInteger<quint64> g_connectionSerial;

QString migrationDir(Dialect dialect)
{
    return dialect == Dialect::Sqlite ? u":/sql/sqlite"_s : u":/sql/postgresql"_s;
}

/// Migration files of a dialect, sorted by their number prefix (`001_init.sql`).
QStringList migrationFiles(Dialect dialect)
{
    QStringList files = QDir(migrationDir(dialect)).entryList({u"*.sql"_s}, QDir::Files, QDir::Name);
    return files;
}

int migrationNumber(const QString &file)
{
    return file.section(u'_', 0, 0).toInt();
}

QStringList splitStatements(const QString &script)
{
    QStringList statements;
    QString current;
    for (const QString &line : script.split(u'\n')) {
        const QString trimmed = line.trimmed();
        if (trimmed.startsWith(u"--"_s) || trimmed.isEmpty())
            continue;
        current += line + u'\n';
        if (trimmed.endsWith(u';')) {
            statements << current.trimmed().chopped(1);
            current.clear();
        }
    }
    if (!current.trimmed().isEmpty())
        statements << current.trimmed();
    return statements;
}

} // namespace

int Database::schemaVersion()
{
    const QStringList files = migrationFiles(Dialect::Sqlite);
    return files.isEmpty() ? 0 : migrationNumber(files.last());
}

Database::Database(DbUrl url)
    : m_url(std::move(url))
    , m_connectionName(u"flashstock-%1"_s.arg(g_connectionSerial.fetchAndAddRelaxed(1)))
{
}

Database::~Database()
{
    qDeleteAll(m_statements);
    m_statements.clear();
    {
        QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
        if (db.isOpen())
            db.close();
    }
    QSqlDatabase::removeDatabase(m_connectionName);
}

Result<std::unique_ptr<Database>> Database::open(const DbUrl &url)
{
    std::unique_ptr<Database> db(new Database(url));
    if (auto r = db->connectNow(); !r)
        return std::unexpected(r.error());
    if (auto r = db->migrate(); !r)
        return std::unexpected(r.error());
    return db;
}

Result<void> Database::connectNow()
{
    qDeleteAll(m_statements);
    m_statements.clear();
    if (QSqlDatabase::contains(m_connectionName)) {
        QSqlDatabase::database(m_connectionName, false).close();
        QSqlDatabase::removeDatabase(m_connectionName);
    }
    if (m_url.dialect == Dialect::Sqlite) {
        if (!QSqlDatabase::isDriverAvailable(u"QSQLITE"_s))
            return fail(ErrorCode::Unavailable,
                        u"the Qt SQLite driver is not installed (Debian: libqt6sql6-sqlite)"_s);
        const QFileInfo info(m_url.path);
        if (info.exists() && !info.isFile())
            return fail(ErrorCode::InvalidArgument,
                        u"db %1 is not a file"_s.arg(m_url.path), u"db"_s);
        if (!info.dir().exists())
            return fail(ErrorCode::Unavailable,
                        u"cannot open %1: directory %2 does not exist"_s.arg(m_url.path, info.dir().path()),
                        u"db"_s);
        // A new book is created private (0600) before SQLite opens it: it holds user ids and
        // payment references, and SQLite gives its WAL and shared memory the book's mode.
        if (!info.exists()) {
            const int fd = ::open(QFile::encodeName(m_url.path).constData(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
            if (fd >= 0)
                ::close(fd);
        }
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, m_connectionName);
        db.setDatabaseName(m_url.path);
        db.setConnectOptions(u"QSQLITE_BUSY_TIMEOUT=%1"_s.arg(kLockWaitMs));
        if (!db.open())
            return fail(ErrorCode::Unavailable,
                        u"cannot open SQLite file %1: %2"_s.arg(m_url.path, db.lastError().text()), u"db"_s);
        // The first read tells a database from any other file.
        if (auto r = exec(u"SELECT count(*) FROM sqlite_master"_s); !r) {
            return fail(ErrorCode::InvalidArgument,
                        u"%1 is not a FlashStock database (SQLite says: %2)"_s.arg(m_url.path, r.error().message),
                        u"db"_s);
        }
        // Another application's database is refused before anything could write to it
        // (switching to WAL rewrites the file header).
        if (auto r = checkOwnedBeforeWriting(); !r)
            return r;
        QStringList pragmas = sql::sessionSetup(Dialect::Sqlite);
        if (!m_autoCheckpoint)
            pragmas << sql::walAutoCheckpointOff();
        for (const QString &pragma : std::as_const(pragmas)) {
            QSqlQuery q(db);
            if (!q.exec(pragma))
                return fail(ErrorCode::Unavailable, u"%1 failed: %2"_s.arg(pragma, q.lastError().text()));
        }
        return {};
    }

    if (!QSqlDatabase::isDriverAvailable(u"QPSQL"_s))
        return fail(ErrorCode::Unavailable,
                    u"the Qt PostgreSQL driver is not installed (Debian: libqt6sql6-psql)"_s);
    QSqlDatabase db = addPostgresConnection(m_url, m_connectionName);
    if (!db.open())
        return fail(ErrorCode::Unavailable,
                    u"cannot connect to %1: %2"_s.arg(m_url.display(), db.lastError().text().trimmed()),
                    u"db"_s);
    return {};
}

Result<void> Database::checkOwnedBeforeWriting()
{
    auto tables = exec(u"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"_s);
    if (!tables)
        return std::unexpected(tables.error());
    if (tables->isEmpty())
        return {};
    bool hasMeta = false;
    for (const QVariantList &row : tables->rows)
        hasMeta = hasMeta || row.at(0).toString() == u"meta"_s;
    if (hasMeta) {
        auto app = exec(u"SELECT value FROM meta WHERE key = 'application'"_s);
        if (app && !app->isEmpty() && app->first().at(0).toString() == u"flashstock"_s)
            return {};
    }
    return fail(ErrorCode::InvalidArgument,
                u"%1 is not a FlashStock database: it holds another application's tables (left untouched)"_s.arg(
                    m_url.path),
                u"db"_s);
}

QString Database::nowMsExpr() const
{
    if (m_url.dialect == Dialect::Sqlite)
        return u"CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"_s;
    // statement_timestamp(), not clock_timestamp(): one instant for the whole statement, as
    // SQLite's 'now' is, so a row written with `now` twice (created_at, and expires_at as
    // created_at + hold) holds exactly the hold between them.
    return u"CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS BIGINT)"_s;
}

Result<qint64> Database::nowMs()
{
    auto rows = exec(u"SELECT "_s + nowMsExpr());
    if (!rows)
        return std::unexpected(rows.error());
    return rows->first().at(0).toLongLong();
}

Error Database::classify(const QSqlError &error, const QString &sql)
{
    const QString code = error.nativeErrorCode();
    const QString text = error.text().trimmed();
    const QString message = u"SQL failed (%1): %2 [%3]"_s.arg(code, text, sql.simplified().left(120));
    if (m_url.dialect == Dialect::Sqlite) {
        // 5 SQLITE_BUSY, 6 SQLITE_LOCKED and their extended codes (low byte).
        const int native = code.toInt();
        const int primary = native & 0xff;
        if (primary == 5 || primary == 6)
            return {ErrorCode::Conflict, message, {}};
        if (primary == 19 && (text.contains(u"UNIQUE"_s) || native == 1555 || native == 2067))
            m_lastUnique = true;
        if (primary == 26)
            return {ErrorCode::InvalidArgument, message, u"db"_s};
        if (primary == 10 || primary == 13 || primary == 14)
            return {ErrorCode::Unavailable, message, {}};
        return {ErrorCode::Internal, message, {}};
    }
    if (code == u"40001"_s || code == u"40P01"_s || code == u"55P03"_s)
        return {ErrorCode::Conflict, message, {}};
    if (code == u"23505"_s)
        m_lastUnique = true;
    if (code.startsWith(u"08"_s) || code == u"57P01"_s || code == u"57P02"_s || code == u"57P03"_s
        || error.type() == QSqlError::ConnectionError
        || !QSqlDatabase::database(m_connectionName, false).isOpen())
        return {ErrorCode::Unavailable, message, {}};
    return {ErrorCode::Internal, message, {}};
}

Result<SqlRows> Database::exec(const QString &sql, const QVariantList &binds)
{
    m_lastUnique = false;
    // No handle of the old connection may be alive while connectNow() replaces it.
    if (!QSqlDatabase::database(m_connectionName, false).isOpen())
        if (auto r = connectNow(); !r)
            return std::unexpected(r.error());
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    QSqlQuery *q = m_statements.value(sql);
    if (!q) {
        // Statements whose text varies (a literal window bound) must not grow the cache
        // without end in a long-running loop: past the bound, start it afresh.
        if (m_statements.size() >= kMaxCachedStatements) {
            qDeleteAll(m_statements);
            m_statements.clear();
        }
        q = new QSqlQuery(db);
        q->setForwardOnly(true);
        if (!q->prepare(sql)) {
            const Error e = classify(q->lastError(), sql);
            delete q;
            return std::unexpected(e);
        }
        m_statements.insert(sql, q);
    }
    for (int i = 0; i < binds.size(); ++i)
        q->bindValue(i, binds.at(i));
    ++m_statementsRun;
    if (!q->exec()) {
        const Error e = classify(q->lastError(), sql);
        q->finish();
        if (e.code == ErrorCode::Unavailable)
            dropConnection(); // the next call connects afresh
        return std::unexpected(e);
    }
    SqlRows out;
    if (q->isSelect()) {
        const int columns = q->record().count();
        while (q->next()) {
            QVariantList row;
            row.reserve(columns);
            for (int c = 0; c < columns; ++c)
                row << q->value(c);
            out.rows << row;
        }
        out.affected = int(out.rows.size());
    } else {
        out.affected = q->numRowsAffected();
    }
    q->finish();
    return out;
}

Result<void> Database::runWrite(const std::function<Result<void>(Transaction &)> &body)
{
    const QString begin = m_url.dialect == Dialect::Sqlite ? u"BEGIN IMMEDIATE"_s : u"BEGIN"_s;
    Error last{ErrorCode::Conflict, {}, {}};
    for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
        if (attempt > 1) {
            // Exponential backoff with jitter: 1, 2, 4 .. 64 ms, times 0.5..1.5.
            const int base = 1 << std::min(attempt - 2, 6);
            QThread::usleep(quint64(base * 1000 * (0.5 + QRandomGenerator::global()->generateDouble())));
        }
        Transaction tx;
        tx.m_attempt = attempt;
        if (auto r = directExec(begin); !r) {
            last = r.error();
            if (last.code == ErrorCode::Conflict)
                continue;
            return std::unexpected(last);
        }
        const Result<void> r = body(tx);
        if (r && !tx.isRollbackOnly() && m_writeFaults && m_writeFaults->failBeforeCommit()) {
            // The injected failure is the one to report; a ROLLBACK that fails commits nothing
            // either (and a transaction it leaves open makes the next BEGIN fail, loudly).
            (void)directExec(u"ROLLBACK"_s);
            return fail(ErrorCode::Unavailable,
                        u"injected failure (drill db-error): the connection dropped before COMMIT"_s);
        }
        if (r && !tx.isRollbackOnly()) {
            if (m_writeFaults)
                m_writeFaults->beforeCommit();
            if (auto c = directExec(u"COMMIT"_s); c)
                return {};
            else
                last = c.error();
            if (last.code == ErrorCode::Unavailable) {
                // The COMMIT was sent and the connection went: it may have committed or not.
                return fail(ErrorCode::OutcomeUnknown,
                            u"the connection to the book was lost at COMMIT: the transaction may or may not have "
                            u"committed (%1)"_s.arg(last.message));
            }
            // The COMMIT's error is the one to report. A ROLLBACK that fails as well commits
            // nothing either; a transaction it leaves open makes the next BEGIN fail, loudly.
            (void)directExec(u"ROLLBACK"_s);
            if (last.code == ErrorCode::Conflict)
                continue;
            return std::unexpected(last);
        }
        // Undoing is all that is left to do. A ROLLBACK that fails commits nothing either (and a
        // transaction it leaves open makes the next BEGIN fail, loudly); the body's answer stands.
        (void)directExec(u"ROLLBACK"_s);
        if (r)
            return {};
        last = r.error();
        if (last.code != ErrorCode::Conflict)
            return std::unexpected(last);
    }
    return fail(ErrorCode::Conflict,
                u"transaction gave up after %1 attempts (busy, serialization failure or deadlock): %2"_s
                    .arg(kMaxAttempts).arg(last.message));
}

void Database::dropConnection()
{
    // Statements first: freeing them after the close warns (and leaks on the server side).
    qDeleteAll(m_statements);
    m_statements.clear();
    QSqlDatabase::database(m_connectionName, false).close();
}

Result<void> Database::leaveCheckpointsToOthers()
{
    if (m_url.dialect != Dialect::Sqlite)
        return {};
    m_autoCheckpoint = false;
    return directExec(sql::walAutoCheckpointOff());
}

Result<Database::WalCheckpoint> Database::checkpointWal()
{
    if (m_url.dialect != Dialect::Sqlite)
        return WalCheckpoint{};
    auto r = exec(sql::walCheckpointPassive());
    if (!r)
        return std::unexpected(r.error());
    if (r->isEmpty())
        return WalCheckpoint{};
    return WalCheckpoint{r->first().at(1).toLongLong(), r->first().at(2).toLongLong()};
}

Result<void> Database::savepoint() { return directExec(sql::savepoint()); }

Result<void> Database::rollbackToSavepoint() { return directExec(sql::rollbackToSavepoint()); }

Result<void> Database::releaseSavepoint() { return directExec(sql::releaseSavepoint()); }

Result<void> Database::directExec(const QString &sql)
{
    if (!QSqlDatabase::database(m_connectionName, false).isOpen())
        if (auto r = connectNow(); !r)
            return std::unexpected(r.error());
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    QSqlQuery q(db);
    if (!q.exec(sql)) {
        const Error e = classify(q.lastError(), sql);
        q.finish();
        if (e.code == ErrorCode::Unavailable)
            dropConnection();
        return std::unexpected(e);
    }
    return {};
}

namespace {

/// What a schema check found: the tables and the meta table's entries.
struct SchemaState {
    QStringList tables;
    QHash<QString, QString> meta;
};

} // namespace

Result<int> Database::readSchemaVersion()
{
    SchemaState state;
    const QString listTables = m_url.dialect == Dialect::Sqlite
        ? u"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"_s
        : u"SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"_s;
    auto listed = exec(listTables);
    if (!listed)
        return std::unexpected(listed.error());
    for (const QVariantList &row : listed->rows)
        state.tables << row.at(0).toString();
    const QString where = m_url.dialect == Dialect::Sqlite ? m_url.path : m_url.display();
    if (!state.tables.isEmpty() && !state.tables.contains(u"meta"_s))
        return fail(ErrorCode::InvalidArgument,
                    u"%1 is not a FlashStock database: it has tables but no FlashStock meta table"_s.arg(where),
                    u"db"_s);
    if (!state.tables.contains(u"meta"_s))
        return 0;
    auto rows = exec(u"SELECT key, value FROM meta"_s);
    if (!rows)
        return std::unexpected(rows.error());
    for (const QVariantList &row : rows->rows)
        state.meta.insert(row.at(0).toString(), row.at(1).toString());
    if (!state.meta.isEmpty() && state.meta.value(u"application"_s) != u"flashstock"_s)
        return fail(ErrorCode::InvalidArgument,
                    u"%1 is not a FlashStock database: its meta table belongs to '%2'"_s
                        .arg(where, state.meta.value(u"application"_s)),
                    u"db"_s);
    bool readable = true;
    const int current = state.meta.isEmpty() ? 0 : state.meta.value(u"schema_version"_s).toInt(&readable);
    if (!readable || current < 0)
        return fail(ErrorCode::InvalidArgument,
                    u"%1 has an unreadable schema version %2 in its meta table: not a FlashStock database this "
                    u"binary can use"_s.arg(where, quoteForMessage(state.meta.value(u"schema_version"_s))),
                    u"db"_s);
    if (current > schemaVersion())
        return fail(ErrorCode::InvalidArgument,
                    u"%1 has schema version %2, newer than this binary's %3: upgrade FlashStock"_s
                        .arg(where).arg(current).arg(schemaVersion()),
                    u"db"_s);
    return current;
}

Result<void> Database::migrate()
{
    // A read first: a book that is up to date is used as it is, so opening it never waits
    // for the write lock of a writer (reads, `sku show`, a reserve's first statement).
    auto seen = readSchemaVersion();
    if (!seen)
        return std::unexpected(seen.error());
    const int latest = schemaVersion();
    if (*seen == latest)
        return {};
    // Behind (or new): migrate under the write lock, re-reading the version under it, since
    // another process may have migrated meanwhile.
    const QStringList files = migrationFiles(m_url.dialect);
    return runWrite([&](Transaction &) -> Result<void> {
        if (m_url.dialect == Dialect::Postgres) {
            // Two processes opening a new database at once: one migrates, the other waits.
            if (auto r = exec(u"SELECT pg_advisory_xact_lock(7305001)"_s); !r)
                return std::unexpected(r.error());
        }
        if (auto r = directExec(u"CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"_s); !r)
            return std::unexpected(r.error());
        auto current = readSchemaVersion();
        if (!current)
            return std::unexpected(current.error());
        for (const QString &file : files) {
            const int number = migrationNumber(file);
            if (number <= *current)
                continue;
            QFile f(migrationDir(m_url.dialect) + u'/' + file);
            if (!f.open(QIODevice::ReadOnly))
                return fail(ErrorCode::Internal, u"migration %1 is missing from the binary"_s.arg(file));
            for (const QString &statement : splitStatements(QString::fromUtf8(f.readAll()))) {
                if (auto r = directExec(statement); !r)
                    return fail(ErrorCode::Internal,
                                u"migration %1 failed: %2"_s.arg(file, r.error().message));
            }
        }
        if (*current != latest) {
            const QString upsert = u"INSERT INTO meta (key, value) VALUES (?, ?) "
                                   u"ON CONFLICT (key) DO UPDATE SET value = excluded.value"_s;
            if (auto r = exec(upsert, {u"application"_s, u"flashstock"_s}); !r)
                return std::unexpected(r.error());
            if (auto r = exec(upsert, {u"schema_version"_s, QString::number(latest)}); !r)
                return std::unexpected(r.error());
        }
        return {};
    });
}

} // namespace flashstock
