// WorkerLoop (core/WorkerLoop.h): a worker takes everything queued at once, stop() runs what
// was queued (and what comes back) and then ends the workers, refused posts leave the job
// with the caller, a timer worker's pause ends at stop(). No servers; nothing sleeps: the
// workers are held at known points by futures.

#include "WorkerLoop.h"

#include <QTest>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace flashstock;
using namespace std::chrono_literals;

namespace {

/// A loop of one worker over JobQueue<int> that records every batch it took. The first job
/// whose value is `holdAt` waits for release() before the batch goes on.
class Recorder {
public:
    explicit Recorder(std::size_t maxBatch = std::numeric_limits<std::size_t>::max(), int holdAt = 1)
        : m_loop(maxBatch, [this](std::size_t n) { m_sizes.push_back(n); })
        , m_holdAt(holdAt)
    {
        m_loop.spawn([this] {
            std::deque<int> batch;
            while (m_loop.take(batch)) {
                for (int job : batch) {
                    if (job == m_holdAt) {
                        m_held.set_value();
                        m_release.get_future().wait();
                    }
                }
                std::lock_guard lock(m_mutex);
                m_batches.emplace_back(batch.begin(), batch.end());
            }
        });
    }

    bool post(int job) { return m_loop.post(job); }
    /// Waits until the worker holds job `holdAt`.
    void waitHeld() { m_held.get_future().wait(); }
    void release() { m_release.set_value(); }
    void stop() { m_loop.stop(); }
    std::vector<std::vector<int>> batches()
    {
        std::lock_guard lock(m_mutex);
        return m_batches;
    }
    /// The queue's lengths told to JobQueue's gauge (under the loop's lock).
    std::vector<std::size_t> sizes() const { return m_sizes; }

private:
    std::vector<std::size_t> m_sizes; ///< before m_loop: the gauge outlives the worker
    WorkerLoop<JobQueue<int>> m_loop;
    int m_holdAt;
    std::promise<void> m_held;
    std::promise<void> m_release;
    std::mutex m_mutex;
    std::vector<std::vector<int>> m_batches;
};

/// A queue whose jobs go away and come back (as a gate lane's reserves go to the book
/// writers): drained only once every job that left is back.
struct AwayQueue {
    using Job = int;
    using Batch = std::deque<int>;
    std::deque<int> jobs;
    int away = 0;
    bool push(int &&job)
    {
        jobs.push_back(job);
        return true;
    }
    bool ready() const { return !jobs.empty(); }
    bool drained() const { return jobs.empty() && away == 0; }
    void take(Batch &out, int)
    {
        out.clear();
        out.swap(jobs);
    }
};

} // namespace

class TestWorkerLoop : public QObject {
    Q_OBJECT

private slots:
    void takesEverythingQueuedAtOnce()
    {
        Recorder r;
        QVERIFY(r.post(1));
        r.waitHeld();
        for (int job : {2, 3, 4})
            QVERIFY(r.post(job));
        r.release();
        r.stop();
        QCOMPARE(r.batches(), (std::vector<std::vector<int>>{{1}, {2, 3, 4}}));
    }

    void takesAtMostMaxBatchAndTellsTheLength()
    {
        Recorder r(2);
        QVERIFY(r.post(1));
        r.waitHeld();
        for (int job : {2, 3, 4, 5, 6})
            QVERIFY(r.post(job));
        r.release();
        r.stop();
        QCOMPARE(r.batches(), (std::vector<std::vector<int>>{{1}, {2, 3}, {4, 5}, {6}}));
        // 1 queued, taken; 2..6 queued one by one while the worker held 1; then two by two.
        QCOMPARE(r.sizes(), (std::vector<std::size_t>{1, 0, 1, 2, 3, 4, 5, 3, 1, 0}));
    }

    void stopRunsWhatWasQueuedThenEnds()
    {
        WorkerLoop<JobQueue<int>> loop;
        std::vector<int> ran; // the worker's until stop() returns
        std::promise<void> first;
        loop.spawn([&] {
            std::deque<int> batch;
            while (loop.take(batch)) {
                for (int job : batch) {
                    if (job == 1) {
                        first.set_value();
                        loop.pause(24h); // until stop() begins
                    }
                    ran.push_back(job);
                }
            }
        });
        int job = 1;
        QVERIFY(loop.post(job));
        first.get_future().wait();
        for (int more : {2, 3, 4, 5})
            QVERIFY(loop.post(more));
        QVERIFY(!loop.stopping());
        loop.stop(); // returns once the worker ran 1..5 and its body returned
        QVERIFY(loop.stopping());
        QCOMPARE(ran, (std::vector<int>{1, 2, 3, 4, 5}));
        loop.stop(); // idempotent
    }

    void refusedPostLeavesTheJobWithTheCaller()
    {
        WorkerLoop<JobQueue<std::string>> loop;
        std::string job = "before any worker";
        QVERIFY(!loop.post(job)); // nobody would run it
        QCOMPARE(job, std::string("before any worker"));

        std::promise<std::vector<std::string>> taken;
        loop.spawn([&] {
            std::vector<std::string> all;
            std::deque<std::string> batch;
            while (loop.take(batch))
                all.insert(all.end(), batch.begin(), batch.end());
            taken.set_value(all);
        });
        job = "taken";
        QVERIFY(loop.post(job));
        loop.close();
        job = "after close";
        QVERIFY(!loop.post(job));
        QCOMPARE(job, std::string("after close"));
        loop.stop();
        job = "after stop";
        QVERIFY(!loop.post(job));
        QCOMPARE(job, std::string("after stop"));
        QCOMPARE(taken.get_future().get(), (std::vector<std::string>{"taken"}));
    }

    void manyWorkersRunEveryJobOnce()
    {
        constexpr int kJobs = 2000;
        std::vector<std::atomic<int>> runs(kJobs);
        std::atomic<int> batches{0};
        std::atomic<int> notOne{0}; // batches of another size than maxBatch 1
        {
            WorkerLoop<JobQueue<int>> loop(1);
            for (int w = 0; w < 4; ++w) {
                loop.spawn([&] {
                    std::deque<int> one;
                    while (loop.take(one)) {
                        notOne += one.size() != 1 ? 1 : 0;
                        for (int job : one)
                            ++runs[std::size_t(job)];
                        ++batches;
                    }
                });
            }
            for (int i = 0; i < kJobs; ++i) {
                int job = i;
                QVERIFY(loop.post(job));
            }
        } // the destructor stops the loop: every job queued runs first
        QCOMPARE(batches.load(), kJobs);
        QCOMPARE(notOne.load(), 0);
        for (int i = 0; i < kJobs; ++i)
            QCOMPARE(runs[std::size_t(i)].load(), 1);
    }

    void stopWaitsForJobsThatComeBack()
    {
        WorkerLoop<AwayQueue> loop;
        std::vector<int> ran;
        std::promise<void> sentAway;
        loop.spawn([&] {
            std::deque<int> batch;
            while (loop.take(batch)) {
                for (int job : batch) {
                    ran.push_back(job);
                    if (job == 1) {
                        loop.update([](AwayQueue &q) { ++q.away; });
                        sentAway.set_value();
                    }
                }
            }
        });
        int job = 1;
        QVERIFY(loop.post(job));
        sentAway.get_future().wait();
        std::thread stopper([&] { loop.stop(); });
        loop.pause(24h); // until the stopper's stop() begins
        QVERIFY(loop.stopping());
        // The job comes back (its answer) after stop() began: the worker still takes it.
        loop.update([](AwayQueue &q) {
            q.jobs.push_back(-1);
            --q.away;
        });
        loop.wakeOne();
        stopper.join();
        QCOMPARE(ran, (std::vector<int>{1, -1}));
    }

    void timerWorkerPausesUntilStop()
    {
        WorkerLoop<NoJobs> loop;
        int rounds = 0;
        std::promise<void> firstRound;
        loop.spawn([&] {
            while (!loop.stopping()) {
                if (++rounds == 1)
                    firstRound.set_value();
                loop.pause(24h);
            }
        });
        firstRound.get_future().wait();
        loop.stop(); // cuts the pause short; without that this test would hang
        QCOMPARE(rounds, 1);
    }
};

QTEST_GUILESS_MAIN(TestWorkerLoop)
#include "tst_worker_loop.moc"
