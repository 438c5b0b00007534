#pragma once

#include "Engine.h"
#include "Result.h"
#include "WorkerLoop.h"
#include "open/EngineOpener.h"

#include <functional>

namespace flashstock {
class BookWriters;
}

namespace flashstock::server {

class ServerMetrics;

/// The server's engine workers: a bounded pool of threads, each with its own Engine (book
/// connection for reads, gate context), running the jobs that need an engine besides the
/// reserves: confirm, release and the reads. Their engines send their book writes to the
/// book writers (Engine::useBookWriters: group commit with everything else waiting), so a
/// worker waits for its batch, never a request thread.
///
/// submit() is thread-safe and never waits; jobs run on the workers' threads, oldest first.
class EngineWorkers {
public:
    using Job = std::function<void(Engine &)>;

    /// `workers` threads; `book`: the book writers their engines write through; `metrics`
    /// shows how many jobs wait (neither owned).
    EngineWorkers(ResolvedProfile profile, int workers, BookWriters &book, ServerMetrics &metrics);
    ~EngineWorkers();

    /// Opens every worker's engine (each on its thread). The first open's error if any fails.
    [[nodiscard]] Result<void> start();
    /// Queues `job`. A job submitted before start() or after stop() never runs (dropped).
    void submit(Job job);
    /// Runs every job queued so far, then stops the workers.
    void stop();

private:
    void runWorker(Engine &engine);

    ResolvedProfile m_profile;
    int m_count;
    BookWriters &m_book;
    WorkerLoop<JobQueue<Job>> m_loop; ///< one job per take; its length is the book queue gauge
};

} // namespace flashstock::server
