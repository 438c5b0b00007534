#pragma once

#include "Result.h"
#include "store/DbUrl.h"

#include <QHash>
#include <QList>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QVariant>

#include <functional>
#include <memory>
#include <utility>

namespace flashstock {

/// Rows a statement returned, read in full (so no statement stays open across a commit).
struct SqlRows {
    QList<QVariantList> rows;
    int affected = 0; ///< rows changed by INSERT/UPDATE/DELETE (-1 if the driver cannot tell)

    bool isEmpty() const { return rows.isEmpty(); }
    const QVariantList &first() const { return rows.constFirst(); }
};

/// Handle passed to a transaction body.
class Transaction {
public:
    /// End the transaction with ROLLBACK even though the body returns a value (a refusal).
    void rollbackOnly() { m_rollback = true; }
    bool isRollbackOnly() const { return m_rollback; }
    /// 1 for the first attempt, 2.. for retries after a busy, serialization or deadlock error.
    int attempt() const { return m_attempt; }

private:
    friend class Database;
    bool m_rollback = false;
    int m_attempt = 1;
};

/// Faults a test injects into write transactions (Database::setWriteFaults).
class WriteFaults {
public:
    virtual ~WriteFaults() = default;
    /// True to fail the transaction about to commit (its thread, once per commit).
    virtual bool failBeforeCommit() = 0;
    /// Called just before COMMIT is sent, after failBeforeCommit() said no (the transaction's
    /// thread): a test may cut the connection here to lose the COMMIT's answer.
    virtual void beforeCommit() {}
    /// True to fail `order`'s part of a book batch (asked inside its savepoint, once per
    /// order and attempt): that order alone rolls back and fails with Unavailable.
    virtual bool failOrder(const QString &order) { Q_UNUSED(order); return false; }
};

/// Adds a QtSql connection named `name` to the PostgreSQL database of `url` (its servers,
/// user, password, database and libpq parameters; a 5 s connect timeout unless the URL sets
/// one, `applicationName` as libpq's application_name unless the URL sets one, and
/// plan_cache_mode=force_custom_plan before the URL's own `options`: prepared statements are
/// planned afresh on each run, never by a generic plan cached while the book was young), not
/// opened yet. With several servers libpq tries them in turn for the one `target_session_attrs`
/// asks for (read-write: the primary). The one place a PostgreSQL session is described; the
/// caller opens it, uses it on its own thread and removes it (QSqlDatabase::removeDatabase).
QSqlDatabase addPostgresConnection(const DbUrl &url, const QString &name,
                                   const QString &applicationName = QStringLiteral("flashstock"));

/// One connection to the book of record (SQLite or PostgreSQL), with its migrations.
///
/// Thread affinity: a Database belongs to the thread that opened it; open one per thread
/// (one QSqlDatabase connection per thread, never shared). SQL text lives only in
/// core/store. Write transactions retry a bounded number of times, with backoff, on
/// SQLITE_BUSY, PostgreSQL serialization failures (40001) and deadlocks (40P01); after the
/// last attempt the caller gets ErrorCode::Conflict, never a false success.
class Database {
public:
    /// Schema version this binary writes and reads.
    static int schemaVersion();

    /// Opens the database and applies pending migrations. Errors: InvalidArgument for a file
    /// that is not a FlashStock database or a schema newer than this binary; Unavailable
    /// when the server cannot be reached or the file cannot be opened.
    [[nodiscard]] static Result<std::unique_ptr<Database>> open(const DbUrl &url);
    ~Database();
    Database(const Database &) = delete;
    Database &operator=(const Database &) = delete;

    Dialect dialect() const { return m_url.dialect; }
    const DbUrl &url() const { return m_url; }

    /// Refreshes the planner's statistics (ANALYZE), as autovacuum does on a live server;
    /// for bulk loads and benchmarks. Errors as exec().
    [[nodiscard]] Result<void> analyze() { return directExec(QStringLiteral("ANALYZE")); }

    /// The database clock now, ms since the epoch.
    [[nodiscard]] Result<qint64> nowMs();

    /// SQL expression for the database clock, in ms since the epoch (the one clock of the book):
    /// one value wherever it appears in one statement, a later one in a later statement.
    QString nowMsExpr() const;

    /// Runs one statement with positional `?` binds; reads every row. Prepared statements
    /// are cached per SQL text. Errors are classified: Conflict (busy, serialization,
    /// deadlock: retryable), Unavailable (connection lost), Internal (anything else, incl.
    /// constraint violations; `uniqueViolation()` tells those apart).
    [[nodiscard]] Result<SqlRows> exec(const QString &sql, const QVariantList &binds = {});

    /// Runs `body` in a write transaction (SQLite: BEGIN IMMEDIATE). Commits when it returns
    /// a value and did not call rollbackOnly(); rolls back otherwise. A body or commit that
    /// fails with ErrorCode::Conflict is retried up to `kMaxAttempts` times with backoff. A
    /// connection lost at COMMIT is ErrorCode::OutcomeUnknown (it may have committed).
    template <typename T>
    [[nodiscard]] Result<T> write(const std::function<Result<T>(Transaction &)> &body)
    {
        Result<T> result = fail(ErrorCode::Conflict, QStringLiteral("no attempt made"));
        const Result<void> status = runWrite([&](Transaction &tx) -> Result<void> {
            result = body(tx);
            if (!result)
                return std::unexpected(result.error());
            return {};
        });
        if (!status)
            return std::unexpected(status.error());
        return result;
    }

    /// Inside a write transaction: marks the point one order of a batch rolls back to, so its
    /// failure never undoes its neighbours (one savepoint name, not nested). Errors as exec().
    [[nodiscard]] Result<void> savepoint();
    /// Undoes everything since savepoint() (the transaction stays open and usable).
    [[nodiscard]] Result<void> rollbackToSavepoint();
    /// Keeps everything since savepoint() as part of the transaction.
    [[nodiscard]] Result<void> releaseSavepoint();

    /// SQLite: stop this connection from checkpointing the WAL itself after its commits
    /// (SQLite does that at 1000 pages, on the committing thread, syncing the file there),
    /// so a writer that must not wait on the disk leaves it to checkpointWal() on another
    /// connection. Kept across reconnects; nothing on PostgreSQL. Durability is unchanged:
    /// commits go to the WAL as before. Errors as exec().
    [[nodiscard]] Result<void> leaveCheckpointsToOthers();
    /// What a WAL checkpoint found, in WAL frames (pages).
    struct WalCheckpoint {
        qint64 frames = 0;       ///< in the WAL
        qint64 checkpointed = 0; ///< of those, now in the database file
        /// Everything is in the file: the next write transaction starts the WAL afresh
        /// (unless a reader still reads from it).
        bool complete() const { return checkpointed >= frames; }
    };
    /// SQLite: copies what is committed in the WAL into the database file and syncs it,
    /// waiting for no reader or writer (a passive checkpoint: frames a reader still needs,
    /// or that another connection commits meanwhile, stay for the next one). PostgreSQL:
    /// nothing (an empty WalCheckpoint). Errors as exec().
    [[nodiscard]] Result<WalCheckpoint> checkpointWal();

    /// The test seam set by setWriteFaults(), or nullptr.
    WriteFaults *writeFaults() const { return m_writeFaults; }

    /// True if the last failed exec() broke a UNIQUE or PRIMARY KEY constraint.
    bool lastWasUniqueViolation() const { return m_lastUnique; }

    /// Attempts per write transaction before giving up with Conflict.
    static constexpr int kMaxAttempts = 12;
    /// How long one statement may wait for the write lock before it fails (SQLite's busy
    /// timeout), ms: the longest a reserve's book step legitimately waits behind a writer.
    static constexpr int kLockWaitMs = 10000;
    /// Prepared statements kept per connection before the cache is emptied.
    static constexpr int kMaxCachedStatements = 256;
    /// Prepared statements in the cache now.
    int cachedStatements() const { return int(m_statements.size()); }
    /// Statements exec() has run on this connection (for people, benchmarks and tests).
    qint64 statementsRun() const { return m_statementsRun; }

    /// TEST SEAM for the drill's db-error fault and tests (nothing in the product sets one):
    /// asked once per write transaction, when its body has run and would commit. True: the
    /// transaction is rolled back and fails with ErrorCode::Unavailable instead, as if the
    /// connection dropped before COMMIT; the caller's compensation path runs and the
    /// connection stays usable. nullptr (the default) asks nothing. Not owned.
    void setWriteFaults(WriteFaults *faults) { m_writeFaults = faults; }

private:
    explicit Database(DbUrl url);
    Result<void> connectNow();
    /// Applies pending migrations: the version is read first and the write lock taken only
    /// when there is something to migrate.
    Result<void> migrate();
    /// The book's schema version by reads only (0 for an empty database), checked: another
    /// application's database, an unreadable or a newer version is InvalidArgument.
    Result<int> readSchemaVersion();
    Result<void> runWrite(const std::function<Result<void>(Transaction &)> &body);
    Result<void> directExec(const QString &sql);
    /// A lost connection: its cached statements freed, then closed.
    void dropConnection();
    Result<void> checkOwnedBeforeWriting();
    Error classify(const QSqlError &error, const QString &sql);

    DbUrl m_url;
    QString m_connectionName;
    QHash<QString, QSqlQuery *> m_statements;
    bool m_lastUnique = false;
    qint64 m_statementsRun = 0;
    WriteFaults *m_writeFaults = nullptr; ///< setWriteFaults()
    bool m_autoCheckpoint = true;         ///< leaveCheckpointsToOthers()
};

} // namespace flashstock
