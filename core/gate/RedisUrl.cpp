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
                "unix:///path/redis.sock, redis-cluster://[:password@]host:port[,host:port...] or none)"_s.arg(
                    quoteForMessage(shown), why),
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

/// The `?name=value` options every URL form takes, into `out`; the unix form's own (`db`,
/// `password`) only where `unixOptions`. An error names the option, never its value.
Result<void> parseOptions(const QString &text, const QUrlQuery &query, bool unixOptions, RedisUrl &out)
{
    for (const auto &[key, value] : query.queryItems(QUrl::FullyDecoded)) {
        if (key == u"connect_timeout_ms"_s || key == u"timeout_ms"_s) {
            const qint64 ms = parseBounded(value, 1, 600000);
            if (ms < 0)
                return bad(text, u"%1 must be a number of ms in 1..600000"_s.arg(key));
            (key == u"timeout_ms"_s ? out.timeoutMs : out.connectTimeoutMs) = int(ms);
        } else if (key == u"wait"_s) {
            const qint64 n = parseBounded(value, 0, 16);
            if (n < 0)
                return bad(text, u"wait must be a number of replicas in 0..16"_s);
            out.waitReplicas = int(n);
        } else if (key == u"db"_s && unixOptions) {
            const qint64 db = parseBounded(value, 0, 1023);
            if (db < 0)
                return bad(text, u"db must be a number 0..1023"_s);
            out.db = int(db);
        } else if (key == u"password"_s && unixOptions) {
            out.password = value;
        } else {
            return bad(text, u"unknown option %1"_s.arg(quoteForMessage(key)));
        }
    }
    return {};
}

/// `redis-cluster://[[user]:password@]host:port[,host:port...][?options]`. QUrl takes one
/// host only, so the authority is split here.
Result<RedisUrl> parseCluster(const QString &text, QStringView rest)
{
    RedisUrl out;
    out.kind = RedisUrl::Kind::Cluster;
    const qsizetype q = rest.indexOf(u'?');
    QStringView authority = q < 0 ? rest : rest.left(q);
    if (authority.contains(u'/'))
        return bad(text, u"a cluster URL has no path: Redis Cluster has database 0 only"_s);
    const qsizetype at = authority.lastIndexOf(u'@');
    if (at >= 0) {
        const QStringView userInfo = authority.left(at);
        const qsizetype colon = userInfo.indexOf(u':');
        const QStringView user = colon < 0 ? userInfo : userInfo.left(colon);
        out.user = QUrl::fromPercentEncoding(user.toUtf8());
        if (colon >= 0)
            out.password = QUrl::fromPercentEncoding(userInfo.mid(colon + 1).toUtf8());
        if (!out.user.isEmpty() && out.password.isEmpty())
            return bad(text, u"a user needs a password (redis-cluster://user:password@host:port)"_s);
        authority = authority.mid(at + 1);
    }
    if (authority.isEmpty())
        return bad(text, u"no seed node"_s);
    for (QStringView piece : authority.split(u',')) {
        const auto node = RedisNodeAddress::parse(piece);
        if (!node)
            return bad(text, u"seed node %1 is not host:port"_s.arg(quoteForMessage(piece.toString())));
        out.seeds.append(*node);
    }
    if (q >= 0)
        if (auto r = parseOptions(text, QUrlQuery(rest.mid(q + 1).toString()), false, out); !r)
            return std::unexpected(r.error());
    return out;
}

} // namespace

QString RedisNodeAddress::toString() const
{
    const QString h = host.contains(u':') ? u"[%1]"_s.arg(host) : host;
    return u"%1:%2"_s.arg(h).arg(port);
}

std::optional<RedisNodeAddress> RedisNodeAddress::parse(QStringView text)
{
    RedisNodeAddress out;
    QStringView portText;
    if (text.startsWith(u'[')) {
        const qsizetype close = text.indexOf(u']');
        if (close < 0)
            return std::nullopt;
        out.host = text.mid(1, close - 1).toString();
        const QStringView after = text.mid(close + 1);
        if (!after.isEmpty() && !after.startsWith(u':'))
            return std::nullopt;
        portText = after.mid(1);
        for (QChar c : std::as_const(out.host))
            if (!c.isDigit() && !(c >= u'a' && c <= u'f') && !(c >= u'A' && c <= u'F') && c != u':' && c != u'.')
                return std::nullopt;
    } else {
        const qsizetype colon = text.lastIndexOf(u':');
        out.host = (colon < 0 ? text : text.left(colon)).toString();
        if (colon >= 0)
            portText = text.mid(colon + 1);
        for (QChar c : std::as_const(out.host))
            if (!c.isLetterOrNumber() && c != u'.' && c != u'-' && c != u'_')
                return std::nullopt;
    }
    if (out.host.isEmpty())
        return std::nullopt;
    if (!portText.isNull()) {
        const qint64 port = parseBounded(portText.toString(), 1, 65535);
        if (port < 0)
            return std::nullopt;
        out.port = int(port);
    }
    return out;
}

Result<RedisUrl> RedisUrl::parse(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed == u"none"_s)
        return RedisUrl{};
    if (trimmed.isEmpty())
        return bad(text, u"empty"_s);
    static constexpr QStringView kClusterScheme = u"redis-cluster://";
    if (trimmed.startsWith(kClusterScheme))
        return parseCluster(text, QStringView(trimmed).mid(kClusterScheme.size()));

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

    if (auto r = parseOptions(text, QUrlQuery(url), out.kind == Kind::Unix, out); !r)
        return std::unexpected(r.error());
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

RedisUrl RedisUrl::cluster(const QList<RedisNodeAddress> &seeds)
{
    RedisUrl out;
    out.kind = Kind::Cluster;
    out.seeds = seeds;
    return out;
}

RedisUrl RedisUrl::node(const RedisNodeAddress &address) const
{
    RedisUrl out = *this;
    out.kind = Kind::Tcp;
    out.host = address.host;
    out.port = address.port;
    out.seeds.clear();
    out.socketPath.clear();
    out.db = 0;
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
    if (u.waitReplicas != 0)
        query.addQueryItem(u"wait"_s, QString::number(u.waitReplicas));
    const QString pw = maskPassword && !u.password.isEmpty() ? u"***"_s : u.password;
    if (u.kind == Kind::Cluster) {
        QString userInfo;
        if (!pw.isEmpty())
            userInfo = QString::fromLatin1(QUrl::toPercentEncoding(u.user)) + u":"_s
                       + (maskPassword ? pw : QString::fromLatin1(QUrl::toPercentEncoding(pw))) + u"@"_s;
        QStringList nodes;
        for (const RedisNodeAddress &n : u.seeds)
            nodes << n.toString();
        return u"redis-cluster://"_s + userInfo + nodes.join(u',')
               + (query.isEmpty() ? QString() : u"?"_s + query.toString(QUrl::FullyEncoded));
    }
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
        return u"unix://"_s + u.socketPath + (query.isEmpty() ? QString() : u"?"_s + query.toString(QUrl::FullyEncoded));
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
