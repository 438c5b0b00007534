#pragma once

#include "Result.h"
#include "WorkerLoop.h"
#include "store/Book.h"
#include "store/DbUrl.h"

#include <QHash>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace flashstock {

class Database;
class WriteFaults;

/// The book writers (group commit): a bounded pool of threads, each with its own book
/// connection (Database and Book opened on that thread), each taking every order waiting
/// for it (up to kMaxBatch) into one transaction (Book::reserveBatch, confirmBatch,
/// releaseBatch) as soon as it is free. A lone order goes at once: nothing ever waits on a
/// timer to fill a batch; batches grow by themselves while a writer is busy.
///
/// Reserves queue by the SKU their transaction locks first (their first line in lock
/// order): a free writer takes the oldest SKU no other writer is writing, so a hot SKU's
/// orders go in one batch at a time (one row lock, one commit flush for all of them) and
/// never hold up another SKU's. The writer that finishes a SKU's batch takes the orders
/// that came meanwhile itself (no hand-over to another thread) unless other SKUs wait with
/// no free writer for them. Confirms and releases form batches of their own, taken by any
/// free writer. A batch holds one kind of operation.
///
/// SQLite: the writers do not checkpoint the WAL after their commits (a checkpoint syncs
/// the file, and a writer waiting on the disk holds up every order queued behind it); one
/// more thread with its own connection checkpoints while they go on writing (asked once
/// every kCommitsPerCheckpoint commits), and once more when they stop. A WAL that grows
/// past kWalFramesBeforeCatchUp meanwhile (the writers commit during every checkpoint, so
/// it never starts afresh) is caught up by the writer that commits next, as SQLite's own
/// checkpoint would. Durability is the same
/// either way: commits go to the WAL as before.
///
/// Thread safety: reserve(), confirm() and release() are thread-safe and never wait; the
/// `done` callbacks run on a writer's thread, once per order, after its batch (a callback
/// must not block for long: the writer takes its next batch after the callbacks). The
/// ...AndWait() forms block the calling thread until the answer is there. Errors: each
/// order's own Result (see Book's batches; OutcomeUnknown only if a replay failed too);
/// a writer that cannot open the book answers Unavailable.
class BookWriters {
public:
    /// Orders one transaction takes at most.
    static constexpr int kMaxBatch = 256;
    /// SQLite: WAL frames (pages, 4 KiB each) past which the next writer to commit checkpoints
    /// the WAL itself, so it starts afresh (SQLite's own bound is 1 000).
    static constexpr qint64 kWalFramesBeforeCatchUp = 10'000;
    /// SQLite: commits between two checkpoints the writers ask for. A hot SKU's batches
    /// rewrite the same pages (its bucket, the newest leaves of orders, lines and ledger and
    /// of their indexes); one checkpoint copies each once however many commits wrote it,
    /// where asking after every commit would copy them again and again (docs/benchmarks.md).
    /// A few hundred frames, under SQLite's own 1 000.
    static constexpr int kCommitsPerCheckpoint = 16;

    using ReserveDone = std::function<void(Result<ReserveResult>)>;
    using ChangeDone = std::function<void(Result<OrderChange>)>;

    /// `writers` (1..64) threads on the book at `db`, writing as `actor`. Starts nothing yet.
    BookWriters(DbUrl db, Actor actor, int writers);
    ~BookWriters();
    BookWriters(const BookWriters &) = delete;
    BookWriters &operator=(const BookWriters &) = delete;

    /// Starts the writers and opens each one's book on its thread. The first open's error
    /// if any fails (then nothing runs). Once only: after stop() they do not start again.
    [[nodiscard]] Result<void> start();
    /// Answers every order queued so far, then stops the writers. Idempotent.
    void stop();

    void reserve(ReserveOrder order, ReserveDone done);
    void confirm(FinishOrder order, ChangeDone done);
    void release(FinishOrder order, ChangeDone done);
    [[nodiscard]] Result<ReserveResult> reserveAndWait(ReserveOrder order);
    [[nodiscard]] Result<OrderChange> confirmAndWait(FinishOrder order);
    [[nodiscard]] Result<OrderChange> releaseAndWait(FinishOrder order);

    /// Figures for people, benchmarks and metrics (any thread).
    struct Stats {
        qint64 batches = 0; ///< transactions run
        qint64 orders = 0;  ///< orders answered
        int largest = 0;    ///< the largest batch so far
        qint64 checkpoints = 0; ///< SQLite: WAL checkpoints run by the checkpointer thread
        qint64 queued = 0;  ///< orders waiting for a writer now (not yet in a batch)
    };
    Stats stats() const;

    /// Called after each batch, on the writer's thread, with its operation (`reserve`,
    /// `confirm`, `release`) and how many orders it held: for metrics. It must not block.
    using BatchObserver = std::function<void(const QString &operation, int orders)>;
    /// Sets the batch observer; before start(). Empty: none.
    void setBatchObserver(BatchObserver observer) { m_batchObserver = std::move(observer); }

    /// TEST SEAM (the drill's db-error fault, tests): every writer's Database asks `faults`
    /// (Database::setWriteFaults), from the writers' threads. Set before start(); not owned.
    void setWriteFaultsForTesting(WriteFaults *faults) { m_faults = faults; }

private:
    enum class Kind { Reserve, Confirm, Release };
    struct Job {
        QString lane;          ///< the lane it queues on
        bool exclusive = true; ///< that lane takes one writer at a time (a SKU's reserves)
        Kind kind = Kind::Reserve;
        ReserveOrder reserve;
        FinishOrder finish;
        ReserveDone reserveDone;
        ChangeDone changeDone;
    };
    struct Lane {
        std::deque<Job> jobs;
        bool writing = false; ///< a writer holds a batch of this lane now
        bool exclusive = true; ///< one writer at a time (a SKU's reserves)
    };
    struct Batch {
        QString lane;
        Kind kind = Kind::Reserve;
        std::vector<Job> jobs;
    };
    /// The writers' queue (WorkerLoop): a free writer takes the batch of the oldest ready lane.
    struct Lanes {
        using Batch = BookWriters::Batch;
        using Job = BookWriters::Job;
        QHash<QString, Lane> lanes;
        std::deque<QString> readyLanes; ///< lanes with jobs and room for a writer, oldest first
        /// Queues `job` on its lane; true if that lane just became ready (a writer to wake).
        bool push(Job &&job);
        bool ready() const { return !readyLanes.empty(); }
        /// Stopping: done once nothing waits any more (a lane being written comes back ready).
        bool drained() const;
        void take(Batch &out, int waiting);
        /// Moves the next orders of `lane` (up to kMaxBatch) into `out`.
        void fill(const QString &lane, Batch &out);
    };
    void submit(const QString &lane, bool exclusive, Job job);
    /// Counts `batch` and frees its lane; true if `batch` now holds the lane's next orders
    /// for the same writer (an exclusive lane with orders waiting and no other lane short
    /// of a writer).
    bool finished(Batch &batch);
    void runWriter(int index, std::promise<Result<void>> opened);
    /// SQLite: checkpoints the WAL whenever writers committed since the last checkpoint.
    void runCheckpointer(std::promise<Result<void>> opened);
    /// A writer committed (or tried to) on `db`: the checkpointer has work, or the WAL is
    /// past its bound and this writer catches it up.
    void committed(Database &db);
    static void answer(Book &book, Batch &batch);

    DbUrl m_url;
    Actor m_actor;
    int m_count;
    WriteFaults *m_faults = nullptr;
    BatchObserver m_batchObserver; ///< setBatchObserver()

    bool m_started = false;      ///< start() ran (the owner's thread)
    Stats m_stats;               ///< under the loop's lock (WorkerLoop::update)
    mutable WorkerLoop<Lanes> m_loop;

    std::thread m_checkpointer; ///< SQLite only
    mutable std::mutex m_checkpointMutex;
    std::condition_variable m_checkpointChanged; ///< any of the four below
    bool m_checkpointDue = false;
    bool m_checkpointRunning = false;
    bool m_checkpointerStopping = false;
    qint64 m_walFrames = 0; ///< in the WAL after the last checkpoint; 0 once it starts afresh
    int m_commitsSinceAsked = 0; ///< since the checkpointer was last asked (kCommitsPerCheckpoint)
    qint64 m_checkpoints = 0;    ///< Stats::checkpoints
};

} // namespace flashstock
