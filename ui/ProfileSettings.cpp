#include "ProfileSettings.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QSettings>
#include <QUrl>
#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace flashstock {

QString ProfileSettings::filePath(const QString &dataDir)
{
    return QDir(dataDir).absoluteFilePath(u"flashstock.ini"_s);
}

bool ProfileSettings::exists(const QString &dataDir)
{
    QSettings s(filePath(dataDir), QSettings::IniFormat);
    return s.childGroups().contains(u"console"_s);
}

ConnectionProfile ProfileSettings::load(const ConnectionProfile &base)
{
    ConnectionProfile p = base;
    QSettings s(filePath(base.dataDir), QSettings::IniFormat);
    s.beginGroup(u"console"_s);
    if (s.contains(u"book"_s))
        p.dbUrl = s.value(u"book"_s).toString();
    if (s.contains(u"gate"_s))
        p.redisUrl = s.value(u"gate"_s).toString();
    if (const QString op = s.value(u"operator"_s).toString(); !op.isEmpty())
        p.operatorName = op;
    return p;
}

bool ProfileSettings::save(const ConnectionProfile &profile)
{
    if (!QDir().mkpath(profile.dataDir))
        return false;
    QSettings s(filePath(profile.dataDir), QSettings::IniFormat);
    s.beginGroup(u"console"_s);
    s.setValue(u"book"_s, stripPassword(profile.dbUrl));
    s.setValue(u"gate"_s, stripPassword(profile.redisUrl));
    s.setValue(u"operator"_s, profile.operatorName);
    s.endGroup();
    s.sync();
    return s.status() == QSettings::NoError;
}

QString ProfileSettings::stripPassword(const QString &url)
{
    const QString text = url.trimmed();
    if (!text.contains(u"://"_s))
        return text; // empty (embedded), `none`, or not a URL: nothing to strip
    QUrl u(text);
    if (!u.isValid()) {
        // Do not keep what we cannot read: drop everything between `://` and `@`.
        QString out = text;
        const qsizetype start = out.indexOf(u"://"_s) + 3;
        const qsizetype at = out.indexOf(u'@', start);
        if (at >= 0) {
            const qsizetype colon = out.indexOf(u':', start);
            if (colon >= 0 && colon < at)
                out.remove(colon, at - colon);
        }
        const qsizetype q = out.indexOf(u'?');
        return q >= 0 ? out.left(q) : out;
    }
    const bool emptyUser = u.userName().isEmpty() && !u.password().isEmpty();
    u.setPassword({});
    QUrlQuery query(u);
    for (const QString &key : {u"password"_s, u"pass"_s})
        query.removeAllQueryItems(key);
    u.setQuery(query.isEmpty() ? QString() : query.query());
    QString out = u.toString();
    if (emptyUser)
        out.replace(u"://@"_s, u"://"_s);
    return out;
}

QString ProfileSettings::withRedisPassword(const QString &url)
{
    const QString pw = qEnvironmentVariable("FLASHSTOCK_REDIS_PASSWORD");
    const QString text = url.trimmed();
    if (pw.isEmpty() || !text.contains(u"://"_s))
        return url;
    const QString encoded = QString::fromLatin1(QUrl::toPercentEncoding(pw));
    if (text.startsWith(u"unix://"_s)) {
        if (text.contains(u"password="_s))
            return url;
        return text + (text.contains(u'?') ? u"&"_s : u"?"_s) + u"password="_s + encoded;
    }
    const qsizetype start = text.indexOf(u"://"_s) + 3;
    qsizetype end = text.indexOf(u'/', start);
    if (end < 0)
        end = text.size();
    const QString authority = text.mid(start, end - start);
    const qsizetype at = authority.lastIndexOf(u'@');
    if (at < 0)
        return text.left(start) + u":"_s + encoded + u"@"_s + text.mid(start);
    if (authority.left(at).contains(u':'))
        return url; // the URL has its own password
    return text.left(start + at) + u":"_s + encoded + text.mid(start + at);
}

Result<std::optional<RedisUrl>> ProfileSettings::gateUrl(const ConnectionProfile &profile)
{
    if (profile.redisUrl.isEmpty())
        return std::optional<RedisUrl>{};
    auto parsed = RedisUrl::parse(withRedisPassword(profile.redisUrl));
    if (!parsed)
        return std::unexpected(parsed.error());
    return parsed->isNone() ? std::optional<RedisUrl>{} : std::optional<RedisUrl>(*parsed);
}

Result<DbUrl> ProfileSettings::bookUrl(const ConnectionProfile &profile)
{
    if (profile.dbUrl.isEmpty() || profile.redisUrl.isEmpty()) {
        if (!QDir().mkpath(profile.dataDir))
            return fail(ErrorCode::InvalidArgument, QObject::tr("Cannot create the data dir %1.").arg(profile.dataDir),
                        u"data-dir"_s);
        QFile::setPermissions(profile.dataDir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    return DbUrl::parse(profile.dbUrl.isEmpty()
                            ? u"sqlite:///"_s + QDir(profile.dataDir).absoluteFilePath(u"flashstock.db"_s)
                            : profile.dbUrl);
}

} // namespace flashstock
