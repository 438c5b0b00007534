#include "open/EngineOpener.h"

#include "Identifiers.h"
#include "gate/EmbeddedRedis.h"

#include <QDir>
#include <QFile>

using namespace Qt::StringLiterals;

namespace flashstock {

Result<ResolvedProfile> EngineOpener::resolve(const EngineProfile &profile)
{
    ResolvedProfile r;
    r.dataDir = QDir(EngineProfile::dataDirFor(profile.dataDir)).absolutePath();
    r.operatorName = profile.operatorName.isEmpty() ? EngineProfile::osUserName() : profile.operatorName;
    if (auto ok = checkName(r.operatorName, u"operator"_s); !ok)
        return std::unexpected(ok.error());
    r.bookInDataDir = profile.dbUrl.isEmpty();
    auto book = DbUrl::parse(r.bookInDataDir ? u"sqlite:///"_s + QDir(r.dataDir).absoluteFilePath(u"flashstock.db"_s)
                                             : profile.dbUrl);
    if (!book)
        return std::unexpected(book.error());
    r.book = *book;
    if (profile.redisUrl.isEmpty()) {
        r.gateMode = GateMode::Embedded;
        r.gate = EmbeddedRedis(r.dataDir).url();
        return r;
    }
    auto gate = RedisUrl::parse(profile.redisUrl);
    if (!gate)
        return std::unexpected(gate.error());
    if (gate->isNone()) {
        r.gateMode = GateMode::BookOnly;
        return r;
    }
    // The password comes from the environment, never from argv or a saved file.
    if (gate->password.isEmpty())
        gate->password = qEnvironmentVariable("FLASHSTOCK_REDIS_PASSWORD");
    r.gateMode = GateMode::Url;
    r.gate = *gate;
    return r;
}

Result<OpenedEngine> EngineOpener::open(const ResolvedProfile &profile, const QString &source, GateNeed need)
{
    const bool embedded = profile.gateMode == GateMode::Embedded && need == GateNeed::Needed;
    if (profile.bookInDataDir || embedded) {
        if (!QDir().mkpath(profile.dataDir))
            return fail(ErrorCode::Unavailable, u"cannot create data dir %1"_s.arg(profile.dataDir), u"data-dir"_s);
        QFile::setPermissions(profile.dataDir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    auto engine = Engine::open(EngineOptions{profile.book, std::nullopt, Actor{profile.operatorName, source}});
    if (!engine)
        return std::unexpected(engine.error());
    OpenedEngine opened{std::move(*engine), profile, GateReport{profile.gateMode, false, false, {}}};
    if (profile.gateMode == GateMode::BookOnly || (profile.gateMode == GateMode::Embedded && !embedded))
        return opened;
    if (embedded) {
        EmbeddedRedis server(profile.dataDir);
        if (auto started = server.start())
            opened.gate.startedNow = !server.wasReused();
        else
            opened.gate.problem = started.error().message;
    }
    opened.engine->attachGate(*profile.gate);
    opened.gate.attached = true;
    return opened;
}

} // namespace flashstock
