#include "ProfileSettings.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QUrl>
#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// Writes `s` out; the file is the user's alone, like every file FlashStock creates.
bool syncPrivate(QSettings &s)
{
    s.sync();
    if (s.status() != QSettings::NoError)
        return false;
    return QFile::setPermissions(s.fileName(), QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

} // namespace

QString ProfileSettings::filePath(const QString &dataDir)
{
    return EngineProfile::settingsFile(dataDir);
}

bool ProfileSettings::exists(const QString &dataDir)
{
    QSettings s(filePath(dataDir), QSettings::IniFormat);
    return s.childGroups().contains(u"console"_s);
}

EngineProfile ProfileSettings::load(const EngineProfile &base)
{
    EngineProfile p = base;
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

bool ProfileSettings::save(const EngineProfile &profile)
{
    if (!QDir().mkpath(profile.dataDir))
        return false;
    QSettings s(filePath(profile.dataDir), QSettings::IniFormat);
    s.beginGroup(u"console"_s);
    s.setValue(u"book"_s, stripPassword(profile.dbUrl));
    s.setValue(u"gate"_s, stripPassword(profile.redisUrl));
    s.setValue(u"operator"_s, profile.operatorName);
    s.endGroup();
    return syncPrivate(s);
}

QByteArray ProfileSettings::layout(const QString &dataDir, const QString &name)
{
    QSettings s(filePath(dataDir), QSettings::IniFormat);
    return s.value(u"console_layout/"_s + name).toByteArray();
}

bool ProfileSettings::saveLayout(const QString &dataDir, const QString &name, const QByteArray &state)
{
    if (!QFileInfo(dataDir).isDir())
        return false;
    QSettings s(filePath(dataDir), QSettings::IniFormat);
    s.setValue(u"console_layout/"_s + name, state);
    return syncPrivate(s);
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

} // namespace flashstock
