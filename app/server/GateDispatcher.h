#pragma once

#include "Engine.h"
#include "Result.h"
#include "open/EngineOpener.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace flashstock {
class BookWriters;
}

namespace flashstock::server {

class EngineThread;
class ServerMetrics;

/// The gate dispatcher: one thread that owns the server's gate connection and sends every
/// reserve waiting for it as one pipeline (Engine::passGate), then hands each reserve on:
/// decided ones (refusals, gate trouble, bad input found by the sale rules) are answered at
/// once; for the others it completes what the gate left open (Engine::prepareBook) and hands
/// them to the book writers, which take every waiting order into one transaction (group
/// commit). The book's answers come back to this thread, which gives back or settles the
/// tokens of every answer that is back (Engine::applyBooks: the settles in one pipeline)
/// and answers.
///
/// Batches grow by themselves under load (whatever arrived during one round trip goes in
/// the next, in the gate and in the book alike), and a lone reserve goes at once: nothing
/// waits on a timer. Request threads only submit(); they never wait on Redis or SQL.
class GateDispatcher {
public:
    /// Called once with the reserve's answer (handed over: moved, not copied), on the
    /// dispatcher's thread.
    using Done = std::function<void(Result<ReserveResult>)>;
    /// Most reserves in one pipeline; more wait for the next round trip.
    static constexpr qsizetype kMaxBatch = 4096;

    GateDispatcher(ResolvedProfile profile, BookWriters &book, ServerMetrics &metrics);
    ~GateDispatcher();

    /// Opens the dispatcher's engine on its thread. The open's error if it fails.
    [[nodiscard]] Result<void> start();
    /// Queues a checked reserve (Engine::checkReserve). Thread-safe, never waits.
    void submit(ReserveRequest request, Done done);
    /// Handles everything submitted so far (and the book's answers to it), then stops.
    void stop();

private:
    struct Waiting {
        ReserveRequest request;
        Done done;
    };
    /// A reserve on its way through the phases, shared with the book writers' callback.
    struct Carried {
        ReserveAttempt attempt;
        Done done;
    };
    /// The book's answer to a carried reserve, back on the dispatcher's queue.
    struct Booked {
        std::shared_ptr<Carried> carried;
        Result<ReserveResult> answer;
    };
    void run(Engine &engine);
    void handle(Engine &engine, std::deque<Waiting> batch);
    void settle(Engine &engine, std::deque<Booked> booked);

    ResolvedProfile m_profile;
    BookWriters &m_book;
    ServerMetrics &m_metrics;
    std::unique_ptr<EngineThread> m_thread;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Waiting> m_queue;
    std::deque<Booked> m_booked;
    qint64 m_inBook = 0; ///< handed to the book writers, answer not back yet
    bool m_stopping = false;
};

} // namespace flashstock::server
