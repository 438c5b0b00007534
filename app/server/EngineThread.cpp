#include "EngineThread.h"

#include "ServerLog.h"

#include <QSysInfo>

using namespace Qt::StringLiterals;

namespace flashstock::server {

void runWithEngine(const ResolvedProfile &profile, const std::function<void(Result<void>)> &opened,
                   const std::function<void(Engine &)> &body)
{
    auto engine = EngineOpener::open(profile, serverSource());
    if (!engine) {
        opened(std::unexpected(engine.error()));
        return;
    }
    opened({});
    body(*engine->engine);
}

QString serverSource()
{
    static const QString source = u"server@"_s + QSysInfo::machineHostName();
    return source;
}

void logEngineWarnings(Engine &engine, const QString &who)
{
    const WarningRing warnings = engine.takeWarnings();
    for (const EngineWarning &w : warnings.items())
        ServerLog::trouble(who + u':' + warningKindName(w.kind) + u':' + w.sku, u"%1: %2"_s.arg(who, w.message));
    if (warnings.dropped() > 0)
        ServerLog::trouble(who + u":dropped"_s, u"%1: %2 more engine warnings were dropped"_s.arg(who).arg(
                                                   warnings.dropped()));
}

} // namespace flashstock::server
