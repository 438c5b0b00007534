#pragma once

#include "Engine.h"
#include "Result.h"
#include "open/EngineOpener.h"

#include <QString>

#include <functional>
#include <future>

namespace flashstock::server {

/// The body of a server thread that owns one Engine (its own book connection and gate
/// context, the engine's rule): opens it on the calling thread through EngineOpener; `opened`
/// gets the open's outcome before `body` runs, and after a failure `body` does not run. The
/// server's gate lanes, engine workers and housekeeping threads each run one (WorkerLoop::
/// spawn); `body` returns when its pool stops.
void runWithEngine(const ResolvedProfile &profile, const std::function<void(Result<void>)> &opened,
                   const std::function<void(Engine &)> &body);

/// Spawns on `loop` (a WorkerLoop) a thread that runs `body` on an Engine of its own
/// (runWithEngine) and waits until that engine is open: the open's error if it failed (the
/// thread ends then without running `body`).
template <typename Loop>
[[nodiscard]] Result<void> startWithEngine(Loop &loop, const ResolvedProfile &profile,
                                           std::function<void(Engine &)> body)
{
    std::promise<Result<void>> opened;
    auto ready = opened.get_future();
    loop.spawn([profile, opened = std::move(opened), body = std::move(body)]() mutable {
        runWithEngine(profile, [&opened](Result<void> r) { opened.set_value(std::move(r)); }, body);
    });
    return ready.get();
}

/// What the server writes as the program that acted (Actor::source): `server@HOST`, HOST
/// the machine's host name. Any thread.
QString serverSource();

/// Logs the engine's warnings (gate trouble after commits, left for the reconciler) as
/// throttled trouble lines naming `who`.
void logEngineWarnings(Engine &engine, const QString &who);

} // namespace flashstock::server
