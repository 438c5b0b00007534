#include "EngineThread.h"

#include "ServerLog.h"

#include <future>

using namespace Qt::StringLiterals;

namespace flashstock::server {

EngineThread::EngineThread(QString name, ResolvedProfile profile, std::function<void(Engine &)> body)
    : m_name(std::move(name))
    , m_profile(std::move(profile))
    , m_body(std::move(body))
{
}

EngineThread::~EngineThread()
{
    join();
}

Result<void> EngineThread::start()
{
    std::promise<Result<void>> opened;
    auto ready = opened.get_future();
    launch([&opened](Result<void> r) { opened.set_value(std::move(r)); });
    Result<void> r = ready.get();
    if (!r)
        join();
    return r;
}

void EngineThread::launch(std::function<void(Result<void>)> opened)
{
    m_thread = std::thread([this, opened = std::move(opened)] {
        auto engine = EngineOpener::open(m_profile, u"server"_s);
        if (!engine) {
            opened(std::unexpected(engine.error()));
            return;
        }
        opened({});
        m_body(*engine->engine);
    });
}

void EngineThread::join()
{
    if (m_thread.joinable())
        m_thread.join();
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
