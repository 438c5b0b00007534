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
class SlotMap;
}

namespace flashstock::server {

class EngineThread;
class ServerMetrics;

/// One lane of the gate dispatcher (GateDispatcher): a thread that owns its own Engine
/// (gate connections, book connection) and sends every reserve waiting for it as one
/// pipeline (Engine::passGate), then hands each reserve on: decided ones (refusals, gate
/// trouble, bad input found by the sale rules) are answered at once; for the others it
/// completes what the gate left open (Engine::prepareBook) and hands them to the book
/// writers, which take every waiting order into one transaction (group commit). The book's
/// answers come back to this thread, which gives back or settles the tokens of every answer
/// that is back (Engine::applyBooks: the settles in one pipeline) and answers.
///
/// Batches grow by themselves under load (whatever arrived during one round trip goes in
/// the next, in the gate and in the book alike), and a lone reserve goes at once: nothing
/// waits on a timer. submit() never waits on Redis or SQL.
class GateLane {
public:
    /// Called once with the reserve's answer (handed over: moved, not copied), on the lane's
    /// thread (or, when its engine could not open, the thread that tried).
    using Done = std::function<void(Result<ReserveResult>)>;
    /// Most reserves in one pipeline; more wait for the next round trip.
    static constexpr qsizetype kMaxBatch = 4096;

    /// `name` is for logs. `onSlotMap` (may be empty) gets every slot map the lane's gate
    /// reads (Gate::setSlotMapListener), on the lane's thread.
    GateLane(QString name, ResolvedProfile profile, BookWriters &book, ServerMetrics &metrics,
             std::function<void(const SlotMap &)> onSlotMap);
    /// stop().
    ~GateLane();
    GateLane(const GateLane &) = delete;
    GateLane &operator=(const GateLane &) = delete;

    /// Opens the lane's engine on its thread and waits for it: the open's error if it fails.
    [[nodiscard]] Result<void> start();
    /// Opens the lane's engine on its thread without waiting; reserves submitted meanwhile
    /// wait for it. If the open fails, they are answered with its error (and logged) and
    /// the lane takes no more (submit() returns false).
    void launch();
    /// Queues a checked reserve (Engine::checkReserve). Thread-safe, never waits. False (and
    /// `done` not kept) when the lane takes no more: its engine could not open, or it stops.
    [[nodiscard]] bool submit(ReserveRequest &request, Done &done);
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
    /// The book's answer to a carried reserve, back on the lane's queue.
    struct Booked {
        std::shared_ptr<Carried> carried;
        Result<ReserveResult> answer;
    };
    void opened(Result<void> result);
    void run(Engine &engine);
    void handle(Engine &engine, std::deque<Waiting> batch);
    void settle(Engine &engine, std::deque<Booked> booked);

    const QString m_name;
    ResolvedProfile m_profile;
    BookWriters &m_book;
    ServerMetrics &m_metrics;
    std::function<void(const SlotMap &)> m_onSlotMap;
    std::unique_ptr<EngineThread> m_thread;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Waiting> m_queue;
    std::deque<Booked> m_booked;
    qint64 m_inBook = 0;  ///< handed to the book writers, answer not back yet
    bool m_stopping = false;
    bool m_closed = false; ///< takes no more: stopping, or its engine could not open
};

} // namespace flashstock::server
