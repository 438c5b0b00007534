#pragma once

#include "Result.h"
#include "store/DbUrl.h"

#include <QString>
#include <QStringList>

namespace flashstock {

class Database;

/// What BookBackup::write made, and what its check found.
struct BookBackupReport {
    QString file;          ///< the backup, absolute path (mode 0600)
    Dialect dialect = Dialect::Sqlite;
    QString tool;          ///< what made it: `VACUUM INTO` (SQLite) or `pg_dump` (PostgreSQL, custom format)
    qint64 bytes = 0;      ///< its size
    int schemaVersion = 0; ///< the book's schema version in it
    /// SQLite: SKUs and ledger rows the copy holds (read from the copy); PostgreSQL: -1.
    qint64 skus = -1;
    qint64 ledgerRows = -1;
    QStringList tables;    ///< the book's tables whose data the backup holds, sorted
    QStringList checks;    ///< what was checked, one line each, for people
};

/// An online, consistent backup of the book of record into one file, checked before it is
/// put in place. The book stays open for writes meanwhile.
///
/// - SQLite: `VACUUM INTO` a private file beside the target (one read transaction: a
///   snapshot; writers go on in WAL mode). Checked: the copy opens as a FlashStock book of
///   this binary's schema (Database::open), `PRAGMA integrity_check` answers `ok`, and its
///   SKUs and ledger rows are counted from it.
/// - PostgreSQL: `pg_dump --format=custom` (one snapshot, REPEATABLE READ), run with the
///   book's URL and, when the URL carries one, its password in the child's PGPASSWORD (never
///   on a command line). Checked: `pg_restore --list` lists the data of every table of the
///   book, and `pg_restore --file=/dev/null` reads the whole archive (every data block
///   decompresses). Restore it with `pg_restore --no-owner --dbname=URL FILE` into an empty
///   database.
///
/// The file is written under a temporary name in the target's directory (0600 from the
/// start), synced, checked, then linked into place: an existing file is never replaced
/// unless Overwrite::Yes (then renamed over it, atomically). A failure anywhere leaves no
/// file behind and the target untouched.
///
/// Thread affinity: that of the Database (the book's connection); blocks while the tool
/// runs.
class BookBackup {
public:
    /// Whether an existing target file may be replaced.
    enum class Overwrite { No, Yes };

    explicit BookBackup(Database &db);

    /// Backs the book up into `file`. Errors: InvalidArgument naming `file` (empty, its
    /// directory missing, a directory, the book itself or its WAL, an existing file without
    /// Overwrite::Yes); Unavailable naming `pg_dump` or `pg_restore` (not installed) or `db`
    /// (the tool could not read the book); Internal naming `file` (the backup failed its
    /// check, or could not be written or placed).
    [[nodiscard]] Result<BookBackupReport> write(const QString &file, Overwrite overwrite);

private:
    Result<void> sqliteCopy(const QString &temporary, BookBackupReport &report);
    Result<void> postgresDump(const QString &temporary, BookBackupReport &report);

    Database &m_db;
};

} // namespace flashstock
