#pragma once

#include "Result.h"

#include <QList>
#include <QString>

#include <optional>
#include <utility>

namespace flashstock {

/// The SQL dialects of the book of record.
enum class Dialect { Sqlite, Postgres };

/// One PostgreSQL server named by a book URL.
struct DbHost {
    QString host;    ///< name or IP address (an IPv6 address without brackets)
    int port = 5432; ///< TCP port
    bool operator==(const DbHost &) const = default;
};

/// Where the book of record lives, parsed from a URL:
/// `sqlite:///relative/file.db`, `sqlite:////absolute/file.db`, or
/// `postgresql://user:pass@host:port/db` (`postgres://` too; the password may come from
/// `PGPASSWORD` instead; port defaults to 5432).
///
/// A PostgreSQL URL may name several servers, `postgresql://user@h1:5432,h2:5433/db`: libpq
/// tries them in turn, and with several, `target_session_attrs=read-write` is the default, so
/// a session always lands on the one that takes writes (a failover's new primary). libpq
/// parameters in the query (`?sslmode=require&connect_timeout=3`) are passed through when
/// they are in passThroughParameters(); `target_session_attrs` may only be `read-write` or
/// `primary` (the book writes).
struct DbUrl {
    Dialect dialect = Dialect::Sqlite;
    QString path;         ///< SQLite file path (relative to the working directory or absolute)
    QList<DbHost> hosts;  ///< PostgreSQL servers, in the URL's order (at least one)
    QString user;         ///< PostgreSQL role
    QString password;     ///< PostgreSQL password (from the URL, else PGPASSWORD)
    QString database;     ///< PostgreSQL database name
    /// libpq parameters from the URL's query, in its order, validated (names from
    /// passThroughParameters(), each once; values free of `;` and control characters).
    QList<std::pair<QString, QString>> parameters;

    /// Parses `text`. A PostgreSQL URL without a password of its own takes `password` if it
    /// is given (a password file: EngineOpener), else PGPASSWORD. A malformed URL, an unknown
    /// or repeated parameter, a bad value is InvalidArgument naming field `db` and the value
    /// (password masked).
    [[nodiscard]] static Result<DbUrl> parse(const QString &text, const std::optional<QString> &password = {});
    /// The password written in the URL `text` itself (empty if none or not a PostgreSQL URL);
    /// for refusing one on a command line.
    static QString passwordIn(const QString &text);
    /// The libpq parameters a book URL may carry (connect_timeout, application_name,
    /// keepalives*, tcp_user_timeout, target_session_attrs, the ssl and gss settings,
    /// channel_binding, requirepeer, passfile, options).
    static QStringList passThroughParameters();

    /// The URL for people and logs, password hidden (every host, the parameters).
    QString display() const;
    /// The same URL pointing at another PostgreSQL database (tests and tooling).
    DbUrl withDatabase(const QString &name) const;
    /// The value of libpq parameter `name` from the URL, or nullopt.
    std::optional<QString> parameter(const QString &name) const;
    /// The hosts as libpq takes them in `host=` (`h1,h2`), and the ports in `port=` (`5432,5433`).
    QString hostList() const;
    QString portList() const;
};

} // namespace flashstock
