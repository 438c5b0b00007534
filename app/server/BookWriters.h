#pragma once

#include "Engine.h"
#include "Result.h"
#include "open/EngineOpener.h"

#include <QHash>
#include <QString>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace flashstock::server {

class EngineThread;
class ServerMetrics;

/// The server's bounded pool of book writers: each a thread with its own Engine (book
/// connection and gate context), running jobs that need the book: the book phase of the
/// reserves the gate let through (Engine::finishReserve), confirm, release and the reads.
///
/// One SKU's jobs never hold up another SKU's: a free writer takes a SKU nobody is writing
/// first (oldest first), then jobs without a SKU, and only then another job of a SKU that is
/// already being written, so a hot SKU uses the writers other SKUs leave free. This is where
/// group commit (issue 15) will take every waiting job of a SKU into one transaction: see
/// takeJobs().
///
/// submit() is thread-safe and never waits; jobs run on the writers' threads.
class BookWriters {
public:
    using Job = std::function<void(Engine &)>;

    BookWriters(ResolvedProfile profile, int writers, ServerMetrics &metrics);
    ~BookWriters();

    /// Opens every writer's engine (each on its thread). The first open's error if any fails.
    [[nodiscard]] Result<void> start();
    /// Queues `job`; `sku` (empty: none) is the SKU its book transaction locks first.
    void submit(const QString &sku, Job job);
    /// Runs every job queued so far, then stops the writers.
    void stop();

private:
    struct SkuQueue {
        std::deque<Job> jobs;
        int writing = 0; ///< writers on this SKU now
    };
    /// Taken by one writer: a SKU's jobs (sku set) or one job without a SKU.
    struct Taken {
        QString sku;
        std::vector<Job> jobs;
    };
    void runWriter(Engine &engine);
    /// The next work for a free writer, by the rule above; false once stopping and empty.
    /// Takes one job per turn (a transaction each); group commit raises that.
    bool takeJobs(Taken &out);
    void finished(const QString &sku);
    void publishQueue();

    ResolvedProfile m_profile;
    int m_count;
    ServerMetrics &m_metrics;
    std::vector<std::unique_ptr<EngineThread>> m_threads;

    std::mutex m_mutex;
    std::condition_variable m_wake;
    QHash<QString, SkuQueue> m_bySku;
    std::deque<QString> m_idle;    ///< SKUs with jobs and no writer, oldest first
    std::deque<QString> m_crowded; ///< SKUs with jobs and a writer already on them
    std::deque<Job> m_plain;       ///< jobs without a SKU
    qint64 m_waiting = 0;
    bool m_plainTurn = false;      ///< alternate between SKU jobs and plain jobs
    bool m_stopping = false;
};

} // namespace flashstock::server
