#include "gate/RedisUrl.h"

#include "Identifiers.h"

#include <QUrl>
#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

std::unexpected<Error> bad(const QString &text, const QString &why)
{
    // Never echo a password: show the value with any userinfo masked.
    QString shown = text;
    const int at = shown.lastIndexOf(u'@');
    const int scheme = shown.indexOf(u"://"_s);
    if (at > 0 && scheme >= 0 && at > scheme)
        shown = shown.left(scheme + 3) + u"***"_s + shown.mid(at);
    return fail(ErrorCode::InvalidArgument,
                u"malformed Redis URL %1: %2 (expected redis://[:password@]host:port[/db], "
                "unix:///path/redis.sock or none)"_s.arg(quoteForMessage(shown), why),
                u"redis"_s);
}

/// Parses a whole number in [lo, hi]; -1 on failure.
qint64 parseBounded(const QString &text, qint64 lo, qint64 hi)
{
    bool ok = false;
    const qint64 v = text.toLongLong(&ok);
    if (!ok || text.isEmpty() || !text.front().isDigit() || v < lo || v > hi)
        return -1;
    return v;
}

} // namespace

Result<RedisUrl> RedisUrl::parse(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed == u"none"_s)
        return RedisUrl{};
    if (trimmed.isEmpty())
        return bad(text, u"empty"_s);

    const QUrl url(trimmed, QUrl::StrictMode);
    if (!url.isValid())
        return bad(text, u"not a valid URL"_s); // QUrl's errorString() repeats the password

    RedisUrl out;
    const QString scheme = url.scheme();
    if (scheme == u"redis"_s) {
        out.kind = Kind::Tcp;
        out.host = url.host();
        if (out.host.isEmpty())
            return bad(text, u"no host"_s);
        out.port = url.port(6379);
        if (out.port < 1 || out.port > 65535)
            return bad(text, u"port out of range"_s);
        QString path = url.path();
        if (path.startsWith(u'/'))
            path.remove(0, 1);
        if (!path.isEmpty()) {
            const qint64 db = parseBounded(path, 0, 1023);
            if (db < 0)
                return bad(text, u"database index must be a number 0..1023"_s);
            out.db = int(db);
        }
    } else if (scheme == u"unix"_s) {
        out.kind = Kind::Unix;
        if (!url.host().isEmpty())
            return bad(text, u"a unix URL has no host: use unix:///absolute/path"_s);
        out.socketPath = url.path();
        if (!out.socketPath.startsWith(u'/') || out.socketPath.size() < 2)
            return bad(text, u"the socket path must be absolute"_s);
        // sockaddr_un.sun_path holds 108 bytes including the terminating zero.
        if (out.socketPath.toLocal8Bit().size() > 107)
            return bad(text, u"the socket path is longer than 107 bytes"_s);
    } else {
        return bad(text, u"unknown scheme %1"_s.arg(quoteForMessage(scheme)));
    }

    out.user = url.userName(QUrl::FullyDecoded);
    out.password = url.password(QUrl::FullyDecoded);
    if (!out.user.isEmpty() && out.password.isEmpty())
        return bad(text, u"a user needs a password (redis://user:password@host)"_s);

    const QUrlQuery query(url);
    for (const auto &[key, value] : query.queryItems(QUrl::FullyDecoded)) {
        if (key == u"connect_timeout_ms"_s || key == u"timeout_ms"_s) {
            const qint64 ms = parseBounded(value, 1, 600000);
            if (ms < 0)
                return bad(text, u"%1 must be a number of ms in 1..600000"_s.arg(key));
            (key == u"timeout_ms"_s ? out.timeoutMs : out.connectTimeoutMs) = int(ms);
        } else if (key == u"db"_s && out.kind == Kind::Unix) {
            const qint64 db = parseBounded(value, 0, 1023);
            if (db < 0)
                return bad(text, u"db must be a number 0..1023"_s);
            out.db = int(db);
        } else if (key == u"password"_s && out.kind == Kind::Unix) {
            out.password = value;
        } else {
            return bad(text, u"unknown option %1"_s.arg(quoteForMessage(key)));
        }
    }
    return out;
}

RedisUrl RedisUrl::unixSocket(const QString &path)
{
    RedisUrl out;
    out.kind = Kind::Unix;
    out.socketPath = path;
    return out;
}

RedisUrl RedisUrl::tcp(const QString &host, int port)
{
    RedisUrl out;
    out.kind = Kind::Tcp;
    out.host = host;
    out.port = port;
    return out;
}

static QString render(const RedisUrl &u, bool maskPassword)
{
    using Kind = RedisUrl::Kind;
    if (u.kind == Kind::None)
        return u"none"_s;
    QUrlQuery query;
    if (u.connectTimeoutMs != 500)
        query.addQueryItem(u"connect_timeout_ms"_s, QString::number(u.connectTimeoutMs));
    if (u.timeoutMs != 1000)
        query.addQueryItem(u"timeout_ms"_s, QString::number(u.timeoutMs));
    const QString pw = maskPassword && !u.password.isEmpty() ? u"***"_s : u.password;
    QUrl url;
    if (u.kind == Kind::Tcp) {
        url.setScheme(u"redis"_s);
        url.setHost(u.host);
        url.setPort(u.port);
        if (!pw.isEmpty()) {
            url.setUserName(u.user);
            url.setPassword(pw);
        }
        if (u.db != 0)
            url.setPath(u"/"_s + QString::number(u.db));
    } else {
        url.setScheme(u"unix"_s);
        url.setPath(u.socketPath);
        if (u.db != 0)
            query.addQueryItem(u"db"_s, QString::number(u.db));
        if (!pw.isEmpty())
            query.addQueryItem(u"password"_s, pw);
    }
    if (u.kind == Kind::Unix) // QUrl would print "unix:/path"; the documented form is unix:///path
        return u"unix://"_s + u.socketPath
            + (query.isEmpty() ? QString() : u"?"_s + query.toString(QUrl::FullyEncoded));
    if (!query.isEmpty())
        url.setQuery(query);
    QString s = url.toString();
    // QUrl drops the empty user name before ':password@'; Redis URLs spell it.
    if (u.kind == Kind::Tcp && !pw.isEmpty() && u.user.isEmpty() && !s.contains(u"://:"_s))
        s.replace(u"redis://"_s, u"redis://:"_s);
    return s;
}

QString RedisUrl::toDisplayString() const { return render(*this, true); }
QString RedisUrl::toString() const { return render(*this, false); }

} // namespace flashstock
