#pragma once

#include "Engine.h"
#include "Result.h"
#include "open/EngineOpener.h"

#include <QString>

#include <functional>
#include <memory>
#include <thread>

namespace flashstock::server {

/// A thread that owns one Engine (its own book connection and gate context, the engine's
/// rule), opened on that thread through EngineOpener. The server's dispatcher, book
/// writers and housekeeping each run on one.
class EngineThread {
public:
    /// `body` runs on the new thread once its engine is open and returns when asked to stop
    /// (its own stop signal). `name` is for logs.
    EngineThread(QString name, ResolvedProfile profile, std::function<void(Engine &)> body);
    ~EngineThread();
    EngineThread(const EngineThread &) = delete;
    EngineThread &operator=(const EngineThread &) = delete;

    /// Starts the thread and waits until its engine is open: the open's error if it failed
    /// (the thread has ended then).
    [[nodiscard]] Result<void> start();
    /// Starts the thread without waiting: `opened` gets the open's outcome on the new thread,
    /// before the body runs (after a failure the body does not run and the thread ends).
    void launch(std::function<void(Result<void>)> opened);
    /// Waits for the body to return (the caller made it stop).
    void join();
    const QString &name() const { return m_name; }

private:
    QString m_name;
    ResolvedProfile m_profile;
    std::function<void(Engine &)> m_body;
    std::thread m_thread;
};

/// Logs the engine's warnings (gate trouble after commits, left for the reconciler) as
/// throttled trouble lines naming `who`.
void logEngineWarnings(Engine &engine, const QString &who);

} // namespace flashstock::server
