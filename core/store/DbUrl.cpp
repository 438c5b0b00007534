#include "store/DbUrl.h"

#include "Identifiers.h"

#include <QHostAddress>
#include <QRegularExpression>
#include <QSet>
#include <QUrl>

#include <variant>

namespace flashstock {

namespace {

/// The URL with any password replaced by *** (`scheme://user:secret@` -> `scheme://user:***@`,
/// and a `password=` in the query).
QString masked(const QString &text)
{
    static const QRegularExpression password(QStringLiteral("^([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*):[^@]*@"));
    static const QRegularExpression inQuery(QStringLiteral("([?&]password=)[^&]*"));
    QString out = text;
    out.replace(password, QStringLiteral("\\1:***@"));
    out.replace(inQuery, QStringLiteral("\\1***"));
    return out;
}

std::unexpected<Error> badUrl(const QString &text, const QString &why)
{
    // Never echo a password: not the URL's, not inside the parser's reason either.
    QString reason = why;
    if (const QString secret = DbUrl::passwordIn(text); !secret.isEmpty())
        reason.replace(secret, QStringLiteral("***"));
    return fail(ErrorCode::InvalidArgument,
                QStringLiteral("db %1 is not a valid database URL: %2 (expected sqlite:///file.db, "
                               "sqlite:////abs/file.db or postgresql://user:pass@host:port[,host:port...]/db[?param=value&...])")
                    .arg(quoteForMessage(masked(text)), reason),
                QStringLiteral("db"));
}

QString decoded(QStringView part)
{
    return QUrl::fromPercentEncoding(part.toUtf8());
}

bool hasControl(const QString &s)
{
    for (QChar c : s)
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            return true;
    return false;
}

/// The pieces of `scheme://userinfo@hosts/db?query`, split but not decoded.
struct PgParts {
    QString userinfo;
    QString hosts;
    QString database;
    QString query;
    bool hasQuery = false;
};

PgParts splitPostgres(const QString &rest)
{
    PgParts p;
    const qsizetype slash = rest.indexOf(u'/');
    const qsizetype question = rest.indexOf(u'?');
    const qsizetype authorityEnd = slash >= 0 && (question < 0 || slash < question) ? slash
                                   : question >= 0                                  ? question
                                                                                    : rest.size();
    const QString authority = rest.left(authorityEnd);
    const qsizetype at = authority.lastIndexOf(u'@');
    p.userinfo = at >= 0 ? authority.left(at) : QString();
    p.hosts = authority.mid(at + 1);
    QString tail = rest.mid(authorityEnd);
    if (const qsizetype q = tail.indexOf(u'?'); q >= 0) {
        p.query = tail.mid(q + 1);
        p.hasQuery = true;
        tail = tail.left(q);
    }
    p.database = tail.startsWith(u'/') ? tail.mid(1) : tail;
    return p;
}

/// One `host[:port]` or `[v6][:port]`; an error reason when malformed.
std::variant<DbHost, QString> parseHost(const QString &spec)
{
    DbHost h;
    QString portText;
    bool hasPort = false;
    if (spec.startsWith(u'[')) {
        const qsizetype close = spec.indexOf(u']');
        if (close < 0)
            return QStringLiteral("an IPv6 address without its closing ]");
        h.host = spec.mid(1, close - 1);
        if (QHostAddress(h.host).protocol() != QAbstractSocket::IPv6Protocol)
            return QStringLiteral("'%1' is not an IPv6 address").arg(h.host);
        const QString after = spec.mid(close + 1);
        if (!after.isEmpty() && !after.startsWith(u':'))
            return QStringLiteral("something after ] that is not :PORT");
        hasPort = !after.isEmpty();
        portText = after.mid(1);
    } else {
        const qsizetype colon = spec.lastIndexOf(u':');
        h.host = colon >= 0 ? spec.left(colon) : spec;
        hasPort = colon >= 0;
        portText = hasPort ? spec.mid(colon + 1) : QString();
        static const QRegularExpression name(QStringLiteral("^[A-Za-z0-9._-]+$"));
        if (h.host.isEmpty())
            return QStringLiteral("no host");
        if (!name.match(h.host).hasMatch())
            return QStringLiteral("'%1' is not a host name or address").arg(h.host);
    }
    if (hasPort) {
        bool ok = false;
        h.port = portText.toInt(&ok);
        if (!ok || h.port <= 0 || h.port > 65535 || portText.startsWith(u'+'))
            return QStringLiteral("bad port");
    }
    return h;
}

/// Checks one query parameter; an error reason, or empty.
QString checkParameter(const QString &name, const QString &value)
{
    if (name == QStringLiteral("password"))
        return QStringLiteral("a password goes before the host (user:password@) or in PGPASSWORD or a password file, not in "
                              "the query");
    if (!DbUrl::passThroughParameters().contains(name))
        return QStringLiteral("unknown parameter '%1' (known: %2)")
            .arg(name, DbUrl::passThroughParameters().join(QStringLiteral(", ")));
    if (value.isEmpty())
        return QStringLiteral("parameter %1 has no value").arg(name);
    // The Qt driver splits its connect options at ';'.
    if (value.contains(u';') || hasControl(value))
        return QStringLiteral("parameter %1 has a ';' or a control character in its value").arg(name);
    if (name == QStringLiteral("target_session_attrs") && value != QStringLiteral("read-write")
        && value != QStringLiteral("primary"))
        return QStringLiteral("target_session_attrs must be read-write or primary (the book writes), got '%1'").arg(value);
    if (name == QStringLiteral("connect_timeout")) {
        bool ok = false;
        const int seconds = value.toInt(&ok);
        if (!ok || seconds < 1 || seconds > 3600)
            return QStringLiteral("connect_timeout must be a whole number of seconds from 1 to 3600, got '%1'").arg(value);
    }
    return {};
}

} // namespace

QStringList DbUrl::passThroughParameters()
{
    return {QStringLiteral("connect_timeout"),  QStringLiteral("application_name"),
            QStringLiteral("keepalives"),       QStringLiteral("keepalives_idle"),
            QStringLiteral("keepalives_interval"), QStringLiteral("keepalives_count"),
            QStringLiteral("tcp_user_timeout"), QStringLiteral("target_session_attrs"),
            QStringLiteral("sslmode"),          QStringLiteral("sslcert"),
            QStringLiteral("sslkey"),           QStringLiteral("sslrootcert"),
            QStringLiteral("sslcrl"),           QStringLiteral("sslcrldir"),
            QStringLiteral("sslsni"),           QStringLiteral("ssl_min_protocol_version"),
            QStringLiteral("ssl_max_protocol_version"), QStringLiteral("gssencmode"),
            QStringLiteral("krbsrvname"),       QStringLiteral("channel_binding"),
            QStringLiteral("requirepeer"),      QStringLiteral("passfile"),
            QStringLiteral("options")};
}

QString DbUrl::passwordIn(const QString &text)
{
    const qsizetype scheme = text.indexOf(QStringLiteral("://"));
    if (scheme < 0 || !(text.startsWith(QStringLiteral("postgresql://")) || text.startsWith(QStringLiteral("postgres://"))))
        return {};
    const PgParts parts = splitPostgres(text.mid(scheme + 3));
    const qsizetype colon = parts.userinfo.indexOf(u':');
    return colon >= 0 ? decoded(QStringView(parts.userinfo).mid(colon + 1)) : QString();
}

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

    const qsizetype schemeEnd = text.indexOf(QStringLiteral("://"));
    const QString scheme = schemeEnd > 0 ? text.left(schemeEnd) : QString();
    if (scheme != QStringLiteral("postgresql") && scheme != QStringLiteral("postgres"))
        return badUrl(text, scheme.isEmpty() ? QStringLiteral("no scheme")
                                             : QStringLiteral("unknown scheme '%1'").arg(scheme));
    if (hasControl(text) || text.contains(u' '))
        return badUrl(text, QStringLiteral("a space or control character in the URL"));
    if (text.contains(u'#'))
        return badUrl(text, QStringLiteral("a fragment (#) is not supported"));
    url.dialect = Dialect::Postgres;
    const PgParts parts = splitPostgres(text.mid(schemeEnd + 3));

    const qsizetype colon = parts.userinfo.indexOf(u':');
    url.user = decoded(QStringView(parts.userinfo).left(colon >= 0 ? colon : parts.userinfo.size()));
    url.password = colon >= 0 ? decoded(QStringView(parts.userinfo).mid(colon + 1)) : QString();

    if (parts.hosts.isEmpty())
        return badUrl(text, QStringLiteral("no host"));
    for (const QString &spec : parts.hosts.split(u',')) {
        auto host = parseHost(spec);
        if (const QString *why = std::get_if<QString>(&host))
            return badUrl(text, *why);
        url.hosts << std::get<DbHost>(host);
    }
    if (url.user.isEmpty())
        return badUrl(text, QStringLiteral("no user"));
    if (url.password.isEmpty())
        url.password = password.value_or(qEnvironmentVariable("PGPASSWORD"));
    url.database = decoded(parts.database);
    if (url.database.isEmpty() || url.database.contains(QLatin1Char('/')))
        return badUrl(text, QStringLiteral("no database name after the host"));

    if (parts.hasQuery) {
        QSet<QString> seen;
        for (const QString &item : parts.query.split(u'&')) {
            const qsizetype eq = item.indexOf(u'=');
            const QString name = decoded(QStringView(item).left(eq >= 0 ? eq : item.size()));
            const QString value = eq >= 0 ? decoded(QStringView(item).mid(eq + 1)) : QString();
            if (const QString why = checkParameter(name, value); !why.isEmpty())
                return badUrl(text, why);
            if (seen.contains(name))
                return badUrl(text, QStringLiteral("parameter %1 appears twice").arg(name));
            seen.insert(name);
            url.parameters.append({name, value});
        }
    }
    // Several servers: the session goes to the one that takes writes, whichever that is now.
    if (url.hosts.size() > 1 && !url.parameter(QStringLiteral("target_session_attrs")))
        url.parameters.append({QStringLiteral("target_session_attrs"), QStringLiteral("read-write")});
    return url;
}

QString DbUrl::display() const
{
    if (dialect == Dialect::Sqlite)
        return QStringLiteral("sqlite:///") + path;
    QStringList servers;
    for (const DbHost &h : hosts)
        servers << (h.host.contains(u':') ? QStringLiteral("[%1]:%2") : QStringLiteral("%1:%2")).arg(h.host, QString::number(h.port));
    QString out = QStringLiteral("postgresql://%1@%2/%3")
                      .arg(QString::fromLatin1(QUrl::toPercentEncoding(user)), servers.join(u','),
                           QString::fromLatin1(QUrl::toPercentEncoding(database)));
    QStringList query;
    for (const auto &[name, value] : parameters)
        query << name + u'=' + QString::fromLatin1(QUrl::toPercentEncoding(value));
    if (!query.isEmpty())
        out += u'?' + query.join(u'&');
    return out;
}

DbUrl DbUrl::withDatabase(const QString &name) const
{
    DbUrl copy = *this;
    copy.database = name;
    return copy;
}

std::optional<QString> DbUrl::parameter(const QString &name) const
{
    for (const auto &[n, v] : parameters)
        if (n == name)
            return v;
    return std::nullopt;
}

QString DbUrl::hostList() const
{
    QStringList out;
    for (const DbHost &h : hosts)
        out << h.host;
    return out.join(u',');
}

QString DbUrl::portList() const
{
    QStringList out;
    for (const DbHost &h : hosts)
        out << QString::number(h.port);
    return out.join(u',');
}

} // namespace flashstock
