// Cluster benchmark, printed (never a timed test): the crowd on 12 hot SKUs at once through
// our gate, one redis-server against a 3-master Redis Cluster without and with 3 replicas,
// all on the same machine in one run, plain and pipelined, as answers/s and their ratio;
// and what `?wait=1` costs a reserve that takes stock (latency p50/p99 and answers/s,
// wait=0 against wait=1, on the cluster with replicas).
//
//   bench_cluster [--quick] [--threads N] [--seconds S]
//
// Starts its own servers (tests/support). Exit 0 on success, 1 if a reserve failed or a
// server could not be started.
#include "gate/Gate.h"
#include "support/ClusterFixture.h"
#include "support/RedisFixture.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QTextStream>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

constexpr int kHotSkus = 12;
constexpr int kDepth = 16;

struct Run {
    double perSecond = 0;          ///< answers (any business answer) per second
    std::vector<qint64> latencyNs; ///< one per call
    qint64 failures = 0;
    QString firstError;

    double percentileUs(double p) const
    {
        if (latencyNs.empty())
            return 0;
        std::vector<qint64> sorted = latencyNs;
        std::sort(sorted.begin(), sorted.end());
        return double(sorted[std::min(sorted.size() - 1, size_t(p * double(sorted.size())))]) / 1000.0;
    }
};

QStringList hotSkus()
{
    QStringList skus;
    for (int i = 0; i < kHotSkus; ++i)
        skus << u"HOT-%1"_s.arg(i);
    return skus;
}

/// Loads every hot SKU with `stock` units (replacing what was there).
bool load(const RedisUrl &url, qint64 stock)
{
    Gate gate(url);
    for (const QString &sku : hotSkus())
        if (!gate.load(sku, stock, true))
            return false;
    return true;
}

/// `threads` threads, each with its own Gate, reserving 1 unit of the hot SKUs in turn with
/// distinct orders for `seconds`; `depth` > 1 sends that many per call (reservePipeline).
Run crowd(const RedisUrl &url, int threads, int depth, double seconds, const QString &tag)
{
    const QStringList skus = hotSkus();
    std::atomic<bool> stop{false};
    std::atomic<int> ready{0};
    std::mutex mutex;
    Run run;
    qint64 answers = 0;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            Gate gate(url);
            (void)gate.connect();
            std::vector<qint64> latency;
            qint64 mine = 0, failed = 0, n = 0;
            QString error;
            ++ready;
            while (ready.load() < threads)
                std::this_thread::yield();
            while (!stop.load(std::memory_order_relaxed)) {
                QList<GateReserveLine> lines;
                for (int i = 0; i < depth; ++i, ++n)
                    lines.append({skus[(n + t) % skus.size()], u"%1-%2-%3"_s.arg(tag).arg(t).arg(n), {}, 1});
                QElapsedTimer one;
                one.start();
                const auto results = gate.reservePipeline(lines);
                latency.push_back(one.nsecsElapsed());
                for (const auto &r : results) {
                    if (r) {
                        ++mine;
                    } else {
                        ++failed;
                        if (error.isEmpty())
                            error = r.error().message;
                    }
                }
            }
            std::lock_guard lock(mutex);
            answers += mine;
            run.failures += failed;
            if (run.firstError.isEmpty())
                run.firstError = error;
            run.latencyNs.insert(run.latencyNs.end(), latency.begin(), latency.end());
        });
    }
    while (ready.load() < threads)
        std::this_thread::yield();
    QElapsedTimer timer;
    timer.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(qint64(seconds * 1000)));
    stop = true;
    for (auto &th : pool)
        th.join();
    run.perSecond = double(answers) / (double(timer.nsecsElapsed()) / 1e9);
    return run;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(u"Gate benchmark: one redis-server against a 3-master Redis Cluster"_s);
    parser.addHelpOption();
    const QCommandLineOption quick(u"quick"_s, u"Short run (about 10 s with the cluster's start)."_s);
    const QCommandLineOption threadsOpt(u"threads"_s, u"Threads of the crowd (default 16)."_s, u"N"_s, u"16"_s);
    const QCommandLineOption secondsOpt(u"seconds"_s, u"Seconds per case (default 3)."_s, u"S"_s, u"3"_s);
    parser.addOptions({quick, threadsOpt, secondsOpt});
    parser.process(app);

    QTextStream out(stdout);
    const bool isQuick = parser.isSet(quick);
    const int threads = qBound(1, parser.value(threadsOpt).toInt(), 256);
    const double seconds = isQuick ? 0.5 : qBound(0.2, parser.value(secondsOpt).toDouble(), 60.0);
    if (!ClusterFixture::installed()) {
        out << "redis-server or redis-cli is not on PATH" << Qt::endl;
        return qEnvironmentVariableIsSet("CI") ? 1 : 0;
    }
    // The cluster without replicas shows what routing costs; with them, what a cluster that
    // survives a dead master costs (every write, a refusal's counter too, is replicated).
    RedisFixture single;
    ClusterFixture bare(3, 0, 2000), cluster(3, 1, 2000);
    if (!single.start() || !bare.start() || !cluster.start()) {
        out << single.errorString() << bare.errorString() << cluster.errorString() << Qt::endl;
        return 1;
    }
    const RedisUrl singleUrl = single.url(5000), bareUrl = bare.url(5000), clusterUrl = cluster.url(5000);
    qint64 failures = 0;
    const auto report = [&](const Run &r) {
        failures += r.failures;
        if (r.failures)
            out << "  " << r.failures << " failed reserves, first: " << r.firstError << Qt::endl;
    };

    out << "the crowd on " << kHotSkus << " hot SKUs (sold out: every answer out_of_stock), " << threads
        << " threads, each its own Gate; " << QThread::idealThreadCount() << " cores for everything" << Qt::endl;
    out << QString(u"%1 %2 %3 %4 %5 %6"_s)
               .arg(u"case"_s, -24)
               .arg(u"single/s"_s, 10)
               .arg(u"3 masters/s"_s, 12)
               .arg(u"ratio"_s, 6)
               .arg(u"+3 replicas/s"_s, 14)
               .arg(u"ratio"_s, 6)
        << Qt::endl;
    for (const int depth : {1, kDepth}) {
        if (!load(singleUrl, 0) || !load(bareUrl, 0) || !load(clusterUrl, 0)) {
            out << "cannot load the hot SKUs" << Qt::endl;
            return 1;
        }
        const Run s = crowd(singleUrl, threads, depth, seconds, u"s%1"_s.arg(depth));
        const Run b = crowd(bareUrl, threads, depth, seconds, u"b%1"_s.arg(depth));
        const Run c = crowd(clusterUrl, threads, depth, seconds, u"c%1"_s.arg(depth));
        const auto ratio = [&](const Run &r) { return s.perSecond > 0 ? r.perSecond / s.perSecond : 0; };
        out << QString(u"%1 %2 %3 %4 %5 %6"_s)
                   .arg(depth == 1 ? u"plain reserve"_s : u"pipeline of %1 lines"_s.arg(depth), -24)
                   .arg(s.perSecond, 10, 'f', 0)
                   .arg(b.perSecond, 12, 'f', 0)
                   .arg(ratio(b), 6, 'f', 2)
                   .arg(c.perSecond, 14, 'f', 0)
                   .arg(ratio(c), 6, 'f', 2)
            << Qt::endl;
        report(s);
        report(b);
        report(c);
    }

    // The winners' path (each reserve takes a unit) on the cluster, with and without WAIT.
    out << Qt::endl << "?wait=1 on the cluster, reserves that take stock (5 writes each)" << Qt::endl;
    out << QString(u"%1 %2 %3 %4 %5 %6 %7"_s)
               .arg(u"case"_s, -20)
               .arg(u"wait=0 p50us"_s, 13)
               .arg(u"p99us"_s, 8)
               .arg(u"wait=1 p50us"_s, 13)
               .arg(u"p99us"_s, 8)
               .arg(u"p50 ratio"_s, 10)
               .arg(u"answers/s 0 -> 1"_s, 18)
        << Qt::endl;
    RedisUrl waiting = clusterUrl;
    waiting.waitReplicas = 1;
    for (const int n : {1, threads}) {
        if (!load(clusterUrl, 1'000'000'000)) {
            out << "cannot load the hot SKUs" << Qt::endl;
            return 1;
        }
        const Run plain = crowd(clusterUrl, n, 1, seconds, u"w0-%1"_s.arg(n));
        const Run waited = crowd(waiting, n, 1, seconds, u"w1-%1"_s.arg(n));
        out << QString(u"%1 %2 %3 %4 %5 %6 %7"_s)
                   .arg(u"%1 thread(s)"_s.arg(n), -20)
                   .arg(plain.percentileUs(0.5), 13, 'f', 0)
                   .arg(plain.percentileUs(0.99), 8, 'f', 0)
                   .arg(waited.percentileUs(0.5), 13, 'f', 0)
                   .arg(waited.percentileUs(0.99), 8, 'f', 0)
                   .arg(plain.percentileUs(0.5) > 0 ? waited.percentileUs(0.5) / plain.percentileUs(0.5) : 0, 10, 'f', 2)
                   .arg(u"%1 -> %2"_s.arg(plain.perSecond, 0, 'f', 0).arg(waited.perSecond, 0, 'f', 0), 18)
            << Qt::endl;
        report(plain);
        report(waited);
    }
    return failures == 0 ? 0 : 1;
}
