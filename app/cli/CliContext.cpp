#include "CliContext.h"

#include "Identifiers.h"
#include "gate/EmbeddedRedis.h"

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

Result<Engine *> CliContext::engine(bool needsGate)
{
    if (m_engine)
        return m_engine.get();
    if (auto r = checkName(operatorName, u"operator"_s); !r)
        return std::unexpected(r.error());
    std::optional<RedisUrl> redis;
    if (!redisUrl.isEmpty()) {
        auto parsed = RedisUrl::parse(redisUrl);
        if (!parsed)
            return std::unexpected(parsed.error());
        redis = *parsed;
    }
    const bool embeddedGate = redisUrl.isEmpty() && needsGate;
    QString url = dbUrl;
    if (url.isEmpty() || embeddedGate) {
        QDir dir(dataDir);
        if (!dir.exists() && !QDir().mkpath(dataDir))
            return fail(ErrorCode::Unavailable, u"cannot create data dir %1"_s.arg(dataDir), u"data-dir"_s);
        QFile::setPermissions(dataDir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    if (url.isEmpty())
        url = u"sqlite:///"_s + QDir(dataDir).absoluteFilePath(u"flashstock.db"_s);
    auto parsed = DbUrl::parse(url);
    if (!parsed)
        return std::unexpected(parsed.error());
    // The book first: a command refused for its book must not leave a redis-server behind.
    auto opened = Engine::open(EngineOptions{*parsed, redis, Actor{operatorName, u"cli"_s}});
    if (!opened)
        return std::unexpected(opened.error());
    if (embeddedGate) {
        EmbeddedRedis embedded(dataDir);
        auto started = embedded.start();
        if (!started)
            return std::unexpected(started.error());
        if (!embedded.wasReused())
            m_notes << u"gate: started the private redis-server of %1 at %2 (stop it with: flashstock-cli embedded stop)"_s
                           .arg(dataDir, embedded.socketPath());
        (*opened)->attachGate(*started);
    }
    m_engine = std::move(*opened);
    return m_engine.get();
}

QStringList CliContext::takeNotes()
{
    QStringList notes = std::exchange(m_notes, {});
    if (m_engine)
        notes += m_engine->takeWarnings();
    return notes;
}

} // namespace flashstock
