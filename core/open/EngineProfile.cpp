#include "open/EngineProfile.h"

#include <QDir>
#include <QStandardPaths>

#include <pwd.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock {

QString EngineProfile::dataDirFor(const QString &given)
{
    if (!given.isEmpty())
        return given;
    if (const QString env = qEnvironmentVariable("FLASHSTOCK_DATA_DIR"); !env.isEmpty())
        return env;
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + u"/flashstock"_s;
}

QString EngineProfile::osUserName()
{
    if (const passwd *pw = getpwuid(geteuid()); pw && pw->pw_name)
        return QString::fromLocal8Bit(pw->pw_name);
    const QString user = qEnvironmentVariable("USER");
    return user.isEmpty() ? u"unknown"_s : user;
}

QString EngineProfile::settingsFile(const QString &dataDir)
{
    return QDir(dataDir).absoluteFilePath(u"flashstock.ini"_s);
}

QList<EngineProfile::Option> EngineProfile::passwordFileOptions()
{
    return {{u"db-password-file"_s, u"FILE"_s,
             u"The PostgreSQL password: the first line of FILE (mode 0600; else PGPASSWORD)."_s},
            {u"redis-password-file"_s, u"FILE"_s,
             u"The gate's password: the first line of FILE (mode 0600; else FLASHSTOCK_REDIS_PASSWORD)."_s}};
}

bool EngineProfile::setPasswordFile(const QString &name, const QString &path)
{
    if (name == u"db-password-file"_s)
        dbPasswordFile = path;
    else if (name == u"redis-password-file"_s)
        redisPasswordFile = path;
    else
        return false;
    return true;
}

} // namespace flashstock
