#pragma once

#include "Engine.h"
#include "Result.h"
#include "open/EngineOpener.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace flashstock::server {

class BookWriters;
class EngineThread;
class ServerMetrics;

/// The gate dispatcher: one thread that owns the server's gate connection and sends every
/// reserve waiting for it as one pipeline (Engine::passGate), then hands each reserve on:
/// decided ones (refusals, gate trouble, bad input found by the sale rules) are answered at
/// once, the others go to the book writers (Engine::finishReserve there).
///
/// Batches grow by themselves under load (whatever arrived during one round trip goes in
/// the next), and a lone reserve goes at once: nothing waits on a timer. Request threads
/// only submit(); they never wait on Redis or SQL.
class GateDispatcher {
public:
    /// Called once with the reserve's answer, on the dispatcher's or a writer's thread.
    using Done = std::function<void(const Result<ReserveResult> &)>;
    /// Most reserves in one pipeline; more wait for the next round trip.
    static constexpr qsizetype kMaxBatch = 4096;

    GateDispatcher(ResolvedProfile profile, BookWriters &writers, ServerMetrics &metrics);
    ~GateDispatcher();

    /// Opens the dispatcher's engine on its thread. The open's error if it fails.
    [[nodiscard]] Result<void> start();
    /// Queues a checked reserve (Engine::checkReserve). Thread-safe, never waits.
    void submit(ReserveRequest request, Done done);
    /// Handles everything submitted so far, then stops.
    void stop();

private:
    struct Waiting {
        ReserveRequest request;
        Done done;
    };
    void run(Engine &engine);
    void handle(Engine &engine, std::deque<Waiting> batch);

    ResolvedProfile m_profile;
    BookWriters &m_writers;
    ServerMetrics &m_metrics;
    std::unique_ptr<EngineThread> m_thread;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Waiting> m_queue;
    bool m_stopping = false;
};

} // namespace flashstock::server
