#include "store/BookBackup.h"

#include "Domain.h"
#include "Identifiers.h"
#include "store/Book.h"
#include "store/Database.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryFile>

#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// `file` with its directory resolved (symlinks too) and its own name kept: two names of
/// one place compare equal even before the file exists.
QString placeOf(const QString &file)
{
    const QFileInfo info(file);
    return QDir(info.absolutePath()).canonicalPath() + u'/' + info.fileName();
}

Result<void> fsyncPath(const QString &path, int flags)
{
    const int fd = ::open(QFile::encodeName(path).constData(), flags | O_CLOEXEC);
    if (fd < 0)
        return fail(ErrorCode::Internal, u"file: cannot open %1 to sync it: %2"_s.arg(path, qt_error_string(errno)),
                    u"file"_s);
    const int synced = ::fsync(fd);
    const int error = errno;
    ::close(fd);
    if (synced != 0)
        return fail(ErrorCode::Internal, u"file: cannot sync %1: %2"_s.arg(path, qt_error_string(error)), u"file"_s);
    return {};
}

/// The last lines of a tool's stderr, for an error message.
QString tail(const QByteArray &text)
{
    QStringList lines = QString::fromLocal8Bit(text).trimmed().split(u'\n');
    while (lines.size() > 5)
        lines.removeFirst();
    return lines.join(u"; "_s);
}

/// Runs `program` (found on PATH) with `args` and the book's password, if any, in its
/// environment; its stdout, or Unavailable naming `field` with its stderr.
Result<QByteArray> runTool(const QString &program, const QStringList &args, const DbUrl &url, const QString &field)
{
    const QString path = QStandardPaths::findExecutable(program);
    if (path.isEmpty())
        return fail(ErrorCode::Unavailable,
                    u"%1: not found on PATH; it comes with PostgreSQL's client tools (Debian: postgresql-client)"_s.arg(
                        program),
                    program);
    QProcess tool;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!url.password.isEmpty())
        env.insert(u"PGPASSWORD"_s, url.password);
    tool.setProcessEnvironment(env);
    tool.setProgram(path);
    tool.setArguments(args);
    tool.setStandardInputFile(QProcess::nullDevice());
    tool.start();
    if (!tool.waitForStarted(-1))
        return fail(ErrorCode::Unavailable, u"%1: cannot start %2: %3"_s.arg(field, path, tool.errorString()), field);
    tool.waitForFinished(-1);
    const QByteArray out = tool.readAllStandardOutput();
    if (tool.exitStatus() != QProcess::NormalExit || tool.exitCode() != 0)
        return fail(ErrorCode::Unavailable,
                    u"%1: %2 failed (exit %3): %4"_s.arg(field, program).arg(tool.exitCode()).arg(
                        tail(tool.readAllStandardError())),
                    field);
    return out;
}

} // namespace

BookBackup::BookBackup(Database &db)
    : m_db(db)
{
}

Result<BookBackupReport> BookBackup::write(const QString &file, Overwrite overwrite)
{
    auto refuse = [&](const QString &why) {
        return fail(ErrorCode::InvalidArgument, u"file: %1 %2"_s.arg(quoteForMessage(file), why), u"file"_s);
    };
    if (file.isEmpty())
        return fail(ErrorCode::InvalidArgument, u"file: give the backup's file name"_s, u"file"_s);
    const QFileInfo target(file);
    if (!QDir(target.absolutePath()).exists())
        return refuse(u"is in a directory that does not exist (%1)"_s.arg(target.absolutePath()));
    if (target.isDir())
        return refuse(u"is a directory; give a file name"_s);
    if (m_db.dialect() == Dialect::Sqlite) {
        const QString book = placeOf(m_db.url().path);
        for (const QString &suffix : {u""_s, u"-wal"_s, u"-shm"_s, u"-journal"_s})
            if (placeOf(file) == book + suffix)
                return refuse(u"is the book itself%1: a backup goes to another file"_s.arg(
                    suffix.isEmpty() ? QString() : u" (its %1 file)"_s.arg(suffix.mid(1))));
    }
    if (target.exists() || target.isSymLink()) {
        if (overwrite == Overwrite::No)
            return refuse(u"exists; give --overwrite to replace it"_s);
        if (!target.isFile())
            return refuse(u"exists and is not a regular file"_s);
    }

    BookBackupReport report;
    report.file = target.absoluteFilePath();
    report.dialect = m_db.dialect();
    // 0600 from the start (QTemporaryFile creates it so), beside the target so that the
    // final link or rename stays on one file system.
    QTemporaryFile temporary(target.absolutePath() + u"/."_s + target.fileName() + u".XXXXXX.partial"_s);
    if (!temporary.open())
        return fail(ErrorCode::Internal, u"file: cannot create a file in %1: %2"_s.arg(target.absolutePath(),
                                                                                       temporary.errorString()),
                    u"file"_s);
    temporary.close();
    const QString partial = temporary.fileName();
    auto made = m_db.dialect() == Dialect::Sqlite ? sqliteCopy(partial, report) : postgresDump(partial, report);
    if (!made)
        return std::unexpected(made.error());
    if (auto r = fsyncPath(partial, O_RDONLY); !r)
        return std::unexpected(r.error());
    report.bytes = QFileInfo(partial).size();

    const QByteArray from = QFile::encodeName(partial), to = QFile::encodeName(report.file);
    // link() never replaces an existing file: another one made meanwhile is not clobbered.
    const int placed = overwrite == Overwrite::Yes ? ::rename(from.constData(), to.constData())
                                                   : ::link(from.constData(), to.constData());
    if (placed != 0) {
        const int error = errno;
        if (error == EEXIST)
            return refuse(u"appeared while the backup was made; give --overwrite to replace it"_s);
        return fail(ErrorCode::Internal, u"file: cannot put the backup in place as %1: %2"_s.arg(
                                             report.file, qt_error_string(error)),
                    u"file"_s);
    }
    if (auto r = fsyncPath(target.absolutePath(), O_RDONLY | O_DIRECTORY); !r)
        return std::unexpected(r.error());
    return report;
}

Result<void> BookBackup::sqliteCopy(const QString &temporary, BookBackupReport &report)
{
    report.tool = u"VACUUM INTO"_s;
    // One read transaction: a consistent snapshot, while writers go on (WAL).
    if (auto r = m_db.exec(u"VACUUM INTO ?"_s, {temporary}); !r)
        return fail(ErrorCode::Unavailable, u"db: VACUUM INTO %1 failed: %2"_s.arg(temporary, r.error().message),
                    u"db"_s);
    auto failed = [&](const QString &why) {
        return fail(ErrorCode::Internal, u"file: the copy of the book failed its check (%1); nothing was written to "
                                         u"%2"_s.arg(why, report.file),
                    u"file"_s);
    };
    {
        DbUrl url;
        url.dialect = Dialect::Sqlite;
        url.path = temporary;
        auto copy = Database::open(url);
        if (!copy)
            return failed(u"it does not open as a FlashStock book: "_s + copy.error().message);
        report.checks << u"opens as a FlashStock book of schema %1"_s.arg(Database::schemaVersion());
        report.schemaVersion = Database::schemaVersion();
        auto integrity = (*copy)->exec(u"PRAGMA integrity_check"_s);
        if (!integrity)
            return failed(integrity.error().message);
        if (integrity->rows.size() != 1 || integrity->first().value(0).toString() != u"ok"_s) {
            QStringList problems;
            for (const QVariantList &row : std::as_const(integrity->rows))
                problems << row.value(0).toString();
            return failed(u"integrity_check: "_s + problems.mid(0, 5).join(u"; "_s));
        }
        report.checks << u"PRAGMA integrity_check: ok"_s;
        auto tables = (*copy)->exec(u"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                    u"'sqlite_%' ORDER BY name"_s);
        if (!tables)
            return failed(tables.error().message);
        for (const QVariantList &row : std::as_const(tables->rows))
            report.tables << row.value(0).toString();
        Book book(**copy, Actor{u"backup"_s, u"backup"_s});
        auto skus = book.skus();
        auto rows = book.ledgerCount();
        if (!skus || !rows)
            return failed((skus ? rows.error() : skus.error()).message);
        report.skus = skus->size();
        report.ledgerRows = *rows;
        report.checks << u"holds SKUs: %1, ledger rows: %2"_s.arg(report.skus).arg(report.ledgerRows);
    }
    // The check's connection is closed: its WAL is folded into the file and removed.
    if (QFileInfo::exists(temporary + u"-wal"_s))
        return failed(u"its write-ahead log was left behind"_s);
    return {};
}

Result<void> BookBackup::postgresDump(const QString &temporary, BookBackupReport &report)
{
    report.tool = u"pg_dump"_s;
    report.schemaVersion = Database::schemaVersion();
    auto tables = m_db.exec(u"SELECT current_schema(), tablename FROM pg_tables WHERE schemaname = current_schema() "
                            u"ORDER BY tablename"_s);
    if (!tables)
        return std::unexpected(tables.error());
    if (tables->isEmpty())
        return fail(ErrorCode::Internal, u"db: the book has no tables in its schema"_s, u"db"_s);
    const QString schema = tables->first().value(0).toString();
    QStringList expected;
    for (const QVariantList &row : std::as_const(tables->rows))
        expected << row.value(1).toString();

    // The URL as libpq takes it, without the password (DbUrl::display).
    const QString dbname = u"--dbname="_s + m_db.url().display();
    if (auto dumped = runTool(u"pg_dump"_s, {u"--format=custom"_s, u"--no-password"_s, u"--file="_s + temporary, dbname},
                              m_db.url(), u"db"_s);
        !dumped)
        return std::unexpected(dumped.error());
    auto failed = [&](const QString &why) {
        return fail(ErrorCode::Internal, u"file: the dump of the book failed its check (%1); nothing was written to "
                                         u"%2"_s.arg(why, report.file),
                    u"file"_s);
    };
    auto list = runTool(u"pg_restore"_s, {u"--list"_s, temporary}, m_db.url(), u"pg_restore"_s);
    if (!list)
        return failed(list.error().message);
    // `3366; 0 16386 TABLE DATA public ledger flashstock`
    static const QRegularExpression data(u"^\\d+; \\d+ \\d+ TABLE DATA (\\S+) (\\S+) "_s);
    QStringList found;
    for (const QString &line : QString::fromUtf8(*list).split(u'\n')) {
        const auto m = data.match(line);
        if (m.hasMatch() && m.captured(1) == schema)
            found << m.captured(2);
    }
    QStringList missing;
    for (const QString &t : std::as_const(expected))
        if (!found.contains(t))
            missing << t;
    if (!missing.isEmpty())
        return failed(u"pg_restore --list finds no data of %1"_s.arg(missing.join(u", "_s)));
    report.tables = expected;
    report.checks << u"pg_restore --list: the data of all %1 tables of the book"_s.arg(expected.size());
    if (auto read = runTool(u"pg_restore"_s, {u"--file=/dev/null"_s, temporary}, m_db.url(), u"pg_restore"_s); !read)
        return failed(read.error().message);
    report.checks << u"pg_restore read the whole archive"_s;
    return {};
}

} // namespace flashstock
