#pragma once

#include "Result.h"

#include <QString>

#include <optional>

namespace flashstock {

/// The SQL dialects of the book of record.
enum class Dialect { Sqlite, Postgres };

/// Where the book of record lives, parsed from a URL:
/// `sqlite:///relative/file.db`, `sqlite:////absolute/file.db`, or
/// `postgresql://user:pass@host:port/db` (`postgres://` too; the password may come from
/// `PGPASSWORD` instead; port defaults to 5432).
struct DbUrl {
    Dialect dialect = Dialect::Sqlite;
    QString path;      ///< SQLite file path (relative to the working directory or absolute)
    QString host;      ///< PostgreSQL host
    int port = 5432;   ///< PostgreSQL TCP port
    QString user;      ///< PostgreSQL role
    QString password;  ///< PostgreSQL password (from the URL, else PGPASSWORD)
    QString database;  ///< PostgreSQL database name

    /// Parses `text`. A PostgreSQL URL without a password of its own takes `password` if it
    /// is given (a password file: EngineOpener), else PGPASSWORD. A malformed URL is
    /// InvalidArgument naming field `db` and the value.
    [[nodiscard]] static Result<DbUrl> parse(const QString &text, const std::optional<QString> &password = {});
    /// The URL for people and logs, password hidden.
    QString display() const;
    /// The same URL pointing at another PostgreSQL database (tests and tooling).
    DbUrl withDatabase(const QString &name) const;
};

} // namespace flashstock
