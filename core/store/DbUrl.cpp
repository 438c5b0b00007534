#include "store/DbUrl.h"

#include "Identifiers.h"

#include <QRegularExpression>
#include <QUrl>

namespace flashstock {

namespace {

/// The URL with any password replaced by *** (`scheme://user:secret@` -> `scheme://user:***@`).
QString masked(const QString &text)
{
    static const QRegularExpression password(QStringLiteral("^([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*):[^@]*@"));
    QString out = text;
    out.replace(password, QStringLiteral("\\1:***@"));
    return out;
}

std::unexpected<Error> badUrl(const QString &text, const QString &why)
{
    // Never echo a password: not the URL's, not inside the parser's reason either.
    QString reason = why;
    if (const QString secret = QUrl(text).password(); !secret.isEmpty())
        reason.replace(secret, QStringLiteral("***"));
    return fail(ErrorCode::InvalidArgument,
                QStringLiteral("db %1 is not a valid database URL: %2 (expected sqlite:///file.db, "
                               "sqlite:////abs/file.db or postgresql://user:pass@host:port/db)")
                    .arg(quoteForMessage(masked(text)), reason),
                QStringLiteral("db"));
}

} // namespace

Result<DbUrl> DbUrl::parse(const QString &text, const std::optional<QString> &password)
{
    DbUrl url;
    const QString sqlitePrefix = QStringLiteral("sqlite:///");
    if (text.startsWith(sqlitePrefix)) {
        url.dialect = Dialect::Sqlite;
        url.path = QUrl::fromPercentEncoding(text.mid(sqlitePrefix.size()).toUtf8());
        if (url.path.isEmpty() || url.path == QStringLiteral("/"))
            return badUrl(text, QStringLiteral("no file path"));
        if (url.path.contains(QChar(0)) || url.path.contains(QLatin1Char('?')))
            return badUrl(text, QStringLiteral("the file path has a NUL or '?'"));
        return url;
    }
    if (text.startsWith(QStringLiteral("sqlite:")))
        return badUrl(text, QStringLiteral("a SQLite URL starts with sqlite:/// (three slashes)"));

    const QUrl u(text, QUrl::StrictMode);
    const QString scheme = u.scheme();
    if (scheme != QStringLiteral("postgresql") && scheme != QStringLiteral("postgres"))
        return badUrl(text, scheme.isEmpty() ? QStringLiteral("no scheme")
                                             : QStringLiteral("unknown scheme '%1'").arg(scheme));
    if (!u.isValid())
        return badUrl(text, u.errorString().section(QStringLiteral("; source was"), 0, 0)); // no echo of the URL
    url.dialect = Dialect::Postgres;
    url.host = u.host();
    if (url.host.isEmpty())
        return badUrl(text, QStringLiteral("no host"));
    url.port = u.port(5432);
    if (url.port <= 0 || url.port > 65535)
        return badUrl(text, QStringLiteral("bad port"));
    url.user = u.userName();
    if (url.user.isEmpty())
        return badUrl(text, QStringLiteral("no user"));
    url.password = u.password();
    if (url.password.isEmpty())
        url.password = password.value_or(qEnvironmentVariable("PGPASSWORD"));
    url.database = u.path().mid(1);
    if (url.database.isEmpty() || url.database.contains(QLatin1Char('/')))
        return badUrl(text, QStringLiteral("no database name after the host"));
    if (u.hasQuery() || u.hasFragment())
        return badUrl(text, QStringLiteral("query and fragment are not supported"));
    return url;
}

QString DbUrl::display() const
{
    if (dialect == Dialect::Sqlite)
        return QStringLiteral("sqlite:///") + path;
    return QStringLiteral("postgresql://%1@%2:%3/%4").arg(user, host, QString::number(port), database);
}

DbUrl DbUrl::withDatabase(const QString &name) const
{
    DbUrl copy = *this;
    copy.database = name;
    return copy;
}

} // namespace flashstock
