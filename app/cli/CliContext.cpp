#include "CliContext.h"

#include "Identifiers.h"

#include <QDir>
#include <QFile>
#include <QStandardPaths>

#include <pwd.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock {

QString CliContext::osUserName()
{
    if (const passwd *pw = getpwuid(geteuid()); pw && pw->pw_name)
        return QString::fromLocal8Bit(pw->pw_name);
    const QString user = qEnvironmentVariable("USER");
    return user.isEmpty() ? u"unknown"_s : user;
}

QString CliContext::defaultDataDir()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + u"/flashstock"_s;
}

Result<Engine *> CliContext::engine()
{
    if (m_engine)
        return m_engine.get();
    if (auto r = checkName(operatorName, u"operator"_s); !r)
        return std::unexpected(r.error());
    QString url = dbUrl;
    if (url.isEmpty()) {
        QDir dir(dataDir);
        if (!dir.exists() && !QDir().mkpath(dataDir))
            return fail(ErrorCode::Unavailable, u"cannot create data dir %1"_s.arg(dataDir), u"data-dir"_s);
        QFile::setPermissions(dataDir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        url = u"sqlite:///"_s + QDir(dataDir).absoluteFilePath(u"flashstock.db"_s);
    }
    auto parsed = DbUrl::parse(url);
    if (!parsed)
        return std::unexpected(parsed.error());
    if (!redisUrl.isEmpty() && redisUrl != u"none"_s)
        return fail(ErrorCode::InvalidArgument,
                    u"redis %1: this build has no gate yet; use --redis none"_s.arg(quoteForMessage(redisUrl)),
                    u"redis"_s);
    auto opened = Engine::open(EngineOptions{*parsed, Actor{operatorName, u"cli"_s}});
    if (!opened)
        return std::unexpected(opened.error());
    m_engine = std::move(*opened);
    return m_engine.get();
}

} // namespace flashstock
