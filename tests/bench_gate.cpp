// Gate benchmark: reserves/s through our client (1 connection and N threads, plain and
// pipelined) beside redis-benchmark running the same EVALSHA on the same server, as ratios.
//
//   bench_gate [--quick] [--threads N] [--seconds S] [--redis URL]
//
// Without --redis it starts a throwaway redis-server (tests/support/RedisFixture).
// Exit 0 on success, 1 if a reserve failed or the server could not be reached. Without
// redis-server on PATH: 1 under CI, 0 on a developer machine (test::missingServerFails).
#include "gate/Gate.h"
#include "gate/GateKeys.h"
#include "gate/ScriptRegistry.h"
#include "support/RedisFixture.h"
#include "support/TestChecks.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QTextStream>

#include <atomic>
#include <cstdio>
#include <thread>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

const QString kSku = u"BENCH"_s;
constexpr int kDepth = 16;

struct Run {
    double perSecond = 0;
    qint64 failures = 0;
    QString firstError;
};

bool resetStock(const RedisUrl &url)
{
    RedisConnection admin(url);
    auto flushed = admin.command({"FLUSHALL"});
    Gate gate(url);
    return flushed && gate.load(kSku, 2'000'000'000, true).has_value();
}

/// `threads` threads, each with its own Gate, reserving distinct orders for `seconds`;
/// `depth` > 1 sends that many reserves per round trip (reserveBatch).
Run ours(const RedisUrl &url, int threads, int depth, double seconds)
{
    if (!resetStock(url))
        return {0, 1, u"cannot reset the stock"_s};
    std::atomic<bool> stop{false};
    std::atomic<qint64> done{0}, failures{0};
    std::atomic<int> ready{0};
    QString firstError;
    std::mutex errorMutex;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            Gate gate(url);
            (void)gate.connect();
            ++ready;
            qint64 n = 0, mine = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                QString error;
                if (depth <= 1) {
                    auto r = gate.reserve(kSku, u"t%1-%2"_s.arg(t).arg(n++), {}, 1);
                    if (r && r->code == GateCode::Reserved)
                        ++mine;
                    else
                        error = r ? u"code %1"_s.arg(int(r->code)) : r.error().message;
                } else {
                    QList<GateReserveRequest> batch;
                    for (int i = 0; i < depth; ++i)
                        batch.append({u"t%1-%2"_s.arg(t).arg(n++), QString(), 1});
                    auto r = gate.reserveBatch(kSku, batch);
                    if (r)
                        mine += r->size();
                    else
                        error = r.error().message;
                }
                if (!error.isEmpty()) {
                    ++failures;
                    std::lock_guard lock(errorMutex);
                    if (firstError.isEmpty())
                        firstError = error;
                }
            }
            done += mine;
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
    const double elapsed = double(timer.nsecsElapsed()) / 1e9;
    return {double(done.load()) / elapsed, failures.load(), firstError};
}

/// redis-benchmark running the reserve script's EVALSHA (fresh random order ids) with
/// `clients` connections and `pipeline` depth; 0 if redis-benchmark is missing or failed.
double redisBenchmark(const RedisUrl &url, int clients, int pipeline, int requests)
{
    const QString exe = QStandardPaths::findExecutable(u"redis-benchmark"_s);
    if (exe.isEmpty() || url.kind != RedisUrl::Kind::Tcp || !resetStock(url))
        return 0;
    const LuaScript &s = ScriptRegistry::instance().script(ScriptId::Reserve);
    QStringList args{u"-h"_s, url.host, u"-p"_s, QString::number(url.port),
                     u"-c"_s, QString::number(clients), u"-P"_s, QString::number(pipeline),
                     u"-n"_s, QString::number(requests), u"-r"_s, u"1000000000"_s, u"--csv"_s,
                     u"EVALSHA"_s, QString::fromLatin1(s.sha1), QString::number(s.numKeys)};
    for (const char *suffix : {"gate", "open"})
        args << QString::fromUtf8(GateKeys::key(kSku, suffix));
    args << u"rb-__rand_int__"_s << QString() << u"1"_s << kSku;
    QProcess p;
    p.start(exe, args);
    if (!p.waitForFinished(120000) || p.exitCode() != 0)
        return 0;
    // --csv: a header line, then "test","rps",...
    const QList<QByteArray> lines = p.readAllStandardOutput().trimmed().split('\n');
    const QList<QByteArray> fields = lines.last().split(',');
    if (fields.size() < 2)
        return 0;
    QByteArray rps = fields[1];
    rps.replace('"', "");
    return rps.toDouble();
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(u"Gate reserve benchmark"_s);
    parser.addHelpOption();
    const QCommandLineOption quick(u"quick"_s, u"Short run (under 10 s)."_s);
    const QCommandLineOption threadsOpt(u"threads"_s, u"Threads / clients (default 16)."_s, u"N"_s, u"16"_s);
    const QCommandLineOption secondsOpt(u"seconds"_s, u"Seconds per case of ours (default 2)."_s, u"S"_s, u"2"_s);
    const QCommandLineOption redisOpt(u"redis"_s, u"redis://host:port of a server to use (default: own)."_s, u"URL"_s);
    parser.addOptions({quick, threadsOpt, secondsOpt, redisOpt});
    parser.process(app);

    QTextStream out(stdout);
    const bool isQuick = parser.isSet(quick);
    const int threads = qBound(1, parser.value(threadsOpt).toInt(), 256);
    const double seconds = isQuick ? 0.4 : qBound(0.1, parser.value(secondsOpt).toDouble(), 60.0);
    const int scale = isQuick ? 1 : 50; // bounds redis-benchmark requests per case

    std::unique_ptr<RedisFixture> own;
    RedisUrl url;
    if (parser.isSet(redisOpt)) {
        auto parsed = RedisUrl::parse(parser.value(redisOpt));
        if (!parsed) {
            out << parsed.error().message << Qt::endl;
            return 2;
        }
        url = *parsed;
    } else {
        if (!RedisFixture::serverInstalled()) {
            out << "redis-server is not on PATH" << Qt::endl;
            return test::missingServerFails() ? 1 : 0;
        }
        own = std::make_unique<RedisFixture>();
        if (!own->start()) {
            out << own->errorString() << Qt::endl;
            return 1;
        }
        url = own->url(5000);
    }

    struct Case {
        QString name;
        int threads;
        int depth;
        int rbRequests; ///< upper bound of redis-benchmark's -n
    };
    const QList<Case> cases{
        {u"1 connection, plain"_s, 1, 1, 10000 * scale},
        {u"%1 threads/clients, plain"_s.arg(threads), threads, 1, 40000 * scale},
        {u"1 connection, pipelined %1"_s.arg(kDepth), 1, kDepth, 80000 * scale},
        {u"%1 threads/clients, pipelined %2"_s.arg(threads).arg(kDepth), threads, kDepth, 120000 * scale},
    };
    out << "gate reserve benchmark (reserve-2.lua, 1 unit, distinct orders) on "
        << url.toDisplayString() << Qt::endl;
    out << QString(u"%1 %2 %3 %4"_s).arg(u"case"_s, -34).arg(u"ours/s"_s, 12)
               .arg(u"redis-benchmark/s"_s, 18).arg(u"ratio"_s, 7)
        << Qt::endl;
    qint64 failures = 0;
    for (const Case &c : cases) {
        const Run mine = ours(url, c.threads, c.depth, seconds);
        // As many requests as ours did, so both sides run about equally long.
        const int requests = qBound(1000, int(mine.perSecond * seconds), c.rbRequests);
        const double theirs = redisBenchmark(url, c.threads, c.depth, requests);
        failures += mine.failures;
        out << QString(u"%1 %2 %3 %4"_s)
                   .arg(c.name, -34)
                   .arg(mine.perSecond, 12, 'f', 0)
                   .arg(theirs > 0 ? QString::number(theirs, 'f', 0) : u"n/a"_s, 18)
                   .arg(theirs > 0 ? QString::number(mine.perSecond / theirs, 'f', 2) : u"-"_s, 7)
            << Qt::endl;
        if (mine.failures)
            out << "  " << mine.failures << " failed reserves, first: " << mine.firstError << Qt::endl;
    }
    return failures == 0 ? 0 : 1;
}
