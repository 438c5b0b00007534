#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace flashstock {

/// The threads of a worker pool, what they wait for and how they stop: one mutex, one
/// condition variable, the pool's queue and a stopping flag, so a pool writes only its own
/// work. The queue is the pool's type (JobQueue for a plain one); it is read and changed
/// only under the loop's lock, and must offer:
/// - `Job`, `Batch`: what post() queues and what take() hands a worker;
/// - `bool push(Job &&job)`: queues `job`; true if a waiting worker should be woken for it;
/// - `bool ready() const`: a worker can take a batch now;
/// - `bool drained() const`: nothing queued and nothing on its way back (answers the pool
///   waits for): once stop() began, the workers end only then;
/// - `void take(Batch &out, int waiting)`: replaces what `out` holds with the next batch
///   (called only when ready()); `waiting`: how many other workers are still waiting.
///
/// Thread rules: spawn() and stop() belong to the pool's owner (never a worker: stop() joins
/// the workers); post(), close() and update() may be called from any thread and never wait
/// on the workers; take() and pause() are for the workers. Stop semantics: stop() refuses
/// every later post(), then the workers take and run everything queued before it (and what
/// comes back until the queue is drained) and their bodies return; stop() returns once every
/// thread has ended. It is idempotent, and the destructor calls it.
template <typename Queue>
class WorkerLoop {
public:
    using Job = typename Queue::Job;
    using Batch = typename Queue::Batch;

    /// `queueArgs` construct the queue.
    template <typename... Args>
    explicit WorkerLoop(Args &&...queueArgs)
        : m_queue(std::forward<Args>(queueArgs)...)
    {
    }
    ~WorkerLoop() { stop(); }
    WorkerLoop(const WorkerLoop &) = delete;
    WorkerLoop &operator=(const WorkerLoop &) = delete;

    /// Runs `body` on a new thread the loop owns until stop() has joined it; a worker's body
    /// loops on take() (or pause()) and returns when it answers false. From the first spawn()
    /// on, post() is taken (before it, nobody would run the job).
    template <typename Body>
    void spawn(Body &&body)
    {
        {
            std::lock_guard lock(m_mutex);
            m_accepting = !m_stopping && !m_closed;
        }
        m_threads.emplace_back(std::forward<Body>(body));
    }

    /// See the class comment: refuses every later post(), lets the workers run what is
    /// queued, waits for every thread. Not from a worker's thread.
    void stop()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
            m_accepting = false;
        }
        m_wake.notify_all();
        m_stopped.notify_all();
        for (std::thread &t : m_threads)
            t.join();
        m_threads.clear();
    }

    /// Queues `job` (moved from) and wakes a worker if the queue asks for it. False, with
    /// `job` left as it was, before the first spawn() and after close() or stop(). Any thread;
    /// never waits on the workers.
    [[nodiscard]] bool post(Job &job)
    {
        std::unique_lock lock(m_mutex);
        if (!m_accepting)
            return false;
        const bool wake = m_queue.push(std::move(job));
        lock.unlock();
        if (wake)
            m_wake.notify_one();
        return true;
    }

    /// Refuses every later post() (as stop() does) without stopping the workers: for a pool
    /// whose workers cannot run (it then takes back what is queued with update()). Any thread.
    void close()
    {
        std::lock_guard lock(m_mutex);
        m_closed = true;
        m_accepting = false;
    }

    /// Runs `change(queue)` or `change(queue, waiting)` (`waiting`: the workers waiting in
    /// take()) under the loop's lock and returns its result by value: the pool's bookkeeping
    /// between takes (answers coming back, a batch finished). It must not call the loop.
    /// Wake the workers with wakeOne() or wakeAll() after it when it made work ready or
    /// drained the queue. Any thread.
    template <typename Change>
    auto update(Change &&change)
    {
        std::lock_guard lock(m_mutex);
        if constexpr (std::is_invocable_v<Change, Queue &, int>)
            return change(m_queue, m_waiting);
        else
            return change(m_queue);
    }
    void wakeOne() { m_wake.notify_one(); }
    void wakeAll() { m_wake.notify_all(); }

    /// A worker waits until the queue is ready() and moves the next batch into `out` (Queue::
    /// take; one more waiting worker is woken if work is left for it): true. False once
    /// stop() began and the queue is drained(): the worker's body returns.
    [[nodiscard]] bool take(Batch &out)
    {
        std::unique_lock lock(m_mutex);
        ++m_waiting;
        m_wake.wait(lock, [&] { return m_queue.ready() || (m_stopping && m_queue.drained()); });
        --m_waiting;
        if (!m_queue.ready())
            return false;
        m_queue.take(out, m_waiting);
        const bool more = m_queue.ready() && m_waiting > 0;
        lock.unlock();
        if (more)
            m_wake.notify_one();
        return true;
    }

    /// A worker whose work comes from a timer, not a queue, waits `interval` between two
    /// rounds; stop() cuts the wait short.
    void pause(std::chrono::milliseconds interval)
    {
        std::unique_lock lock(m_mutex);
        m_stopped.wait_for(lock, interval, [&] { return m_stopping; });
    }
    /// True once stop() began. Any thread.
    [[nodiscard]] bool stopping() const
    {
        std::lock_guard lock(m_mutex);
        return m_stopping;
    }

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;    ///< take(): work is ready, or the loop stops
    std::condition_variable m_stopped; ///< pause(): the loop stops
    Queue m_queue;
    int m_waiting = 0;       ///< workers in take()
    bool m_accepting = false; ///< post() is taken: spawned, not closed, not stopping
    bool m_closed = false;
    bool m_stopping = false;
    std::vector<std::thread> m_threads; ///< the owner's: spawn() and stop() only
};

/// The plain queue of a WorkerLoop: jobs oldest first, a take moves up to `maxBatch` of them
/// (all that wait, by default). Not thread-safe by itself: the loop's lock guards it.
template <typename T>
class JobQueue {
public:
    using Job = T;
    using Batch = std::deque<T>;

    /// `maxBatch` (1 or more): the most jobs one take moves. `sized` (may be empty): told the
    /// number of queued jobs after every change, under the loop's lock (for a gauge).
    explicit JobQueue(std::size_t maxBatch = std::numeric_limits<std::size_t>::max(),
                      std::function<void(std::size_t)> sized = {})
        : m_maxBatch(maxBatch < 1 ? 1 : maxBatch)
        , m_sized(std::move(sized))
    {
    }

    bool push(T &&job)
    {
        m_jobs.push_back(std::move(job));
        told();
        return true;
    }
    bool ready() const { return !m_jobs.empty(); }
    bool drained() const { return m_jobs.empty(); }
    /// Replaces `out` with the oldest jobs, up to maxBatch: every waiting one in one swap
    /// when they fit.
    void take(Batch &out, int)
    {
        out.clear();
        if (m_jobs.size() <= m_maxBatch) {
            out.swap(m_jobs);
        } else {
            for (std::size_t i = 0; i < m_maxBatch; ++i) {
                out.push_back(std::move(m_jobs.front()));
                m_jobs.pop_front();
            }
        }
        told();
    }

private:
    void told()
    {
        if (m_sized)
            m_sized(m_jobs.size());
    }

    std::deque<T> m_jobs;
    std::size_t m_maxBatch;
    std::function<void(std::size_t)> m_sized;
};

/// The queue of a WorkerLoop whose workers take no jobs: they run on a timer (pause()) until
/// stop().
struct NoJobs {
    struct Job {};
    using Batch = Job;
    bool push(Job &&) { return false; }
    bool ready() const { return false; }
    bool drained() const { return true; }
    void take(Batch &, int) {}
};

} // namespace flashstock
