#include "Server.h"

#include "AccessLog.h"
#include "Api.h"
#include "EngineThread.h"
#include "EngineWorkers.h"
#include "store/BookWriters.h"
#include "GateDispatcher.h"
#include "Housekeeping.h"
#include "HttpServer.h"
#include "ServerLog.h"
#include "ServerMetrics.h"
#include "UnknownOutcomes.h"
#include "open/EngineOpener.h"

#include <QElapsedTimer>
#include <QFile>
#include <QThread>

#include <csignal>
#include <cstdlib>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

/// How long a drain waits for the requests in flight before it answers them 503.
constexpr int kDrainMs = 10000;
/// Past the drain, how long the engine threads get to finish before the process exits anyway.
constexpr int kStopGraceMs = 3000;
/// File descriptors kept for the book, the gate and the logs beside the connections.
constexpr rlim_t kSpareFiles = 256;

/// Raises the open-files limit to its hard maximum and returns how many connections fit.
int connectionsThatFit(int wanted)
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return wanted;
    if (limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
        getrlimit(RLIMIT_NOFILE, &limit);
    }
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > rlim_t(wanted) + kSpareFiles)
        return wanted;
    return int(std::max<rlim_t>(1, limit.rlim_cur > kSpareFiles ? limit.rlim_cur - kSpareFiles : 1));
}

int waitForStopSignal()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int signal = 0;
    while (sigwait(&set, &signal) != 0) {
    }
    return signal;
}

QString gateText(const ResolvedProfile &p)
{
    switch (p.gateMode) {
    case GateMode::BookOnly: return u"none (book-only)"_s;
    case GateMode::Embedded: return u"embedded redis-server at "_s + p.gate->socketPath;
    case GateMode::Url: return p.gate->toDisplayString();
    }
    return {};
}

} // namespace

Server::Server(ServerOptions options)
    : m_o(std::move(options))
{
}

int Server::run()
{
    auto profile = EngineOpener::resolve(m_o.profile);
    if (!profile) {
        ServerLog::error(u"cannot start: "_s + profile.error().message);
        return 2;
    }
    // One open first, on this thread: it creates the data dir, migrates the book and starts
    // (or reuses) the embedded redis-server once, before the engine threads open theirs.
    {
        auto first = EngineOpener::open(*profile, serverSource());
        if (!first) {
            ServerLog::error(u"cannot start: "_s + first.error().message);
            return first.error().code == ErrorCode::InvalidArgument ? 2 : 1;
        }
        if (!first->gate.problem.isEmpty())
            ServerLog::warning(u"gate: the private redis-server did not start, so the gate is down (reserves answer "
                               u"gate_unavailable): "_s + first->gate.problem);
    }
    AccessLog accessLog;
    if (!m_o.accessLog.isEmpty()) {
        if (auto r = accessLog.open(m_o.accessLog); !r) {
            ServerLog::error(u"cannot start: "_s + r.error().message);
            return 2;
        }
    }
    const int wanted = m_o.http.connectionLimit;
    m_o.http.connectionLimit = connectionsThatFit(wanted);
    if (m_o.http.connectionLimit < wanted)
        ServerLog::warning(u"max-connections: %1 asked, %2 fit the open-files limit"_s.arg(wanted).arg(
            m_o.http.connectionLimit));

    ServerMetrics metrics;
    Published<AccessTokenSet> tokens;
    Published<Readiness> readiness;
    // The book writers: the book connections that take every waiting order into one
    // transaction (group commit), for the dispatcher's winners and the workers' confirms
    // and releases alike.
    const Actor self{profile->operatorName, serverSource()};
    BookWriters book(profile->book, self, m_o.bookWriters);
    book.setBatchObserver([&metrics](const QString &operation, int orders) { metrics.bookBatch(operation, orders); });
    metrics.setBookWritersQueueSource([&book] { return book.stats().queued; });
    EngineWorkers workers(*profile, m_o.engineWorkers, book, metrics);
    // Tokens of reserves whose book outcome was lost: the dispatcher keeps them, the
    // housekeeping resolves them.
    UnknownOutcomes unknown;
    GateDispatcher dispatcher(*profile, book, metrics, unknown);
    Housekeeping housekeeping(*profile, m_o.housekeeping, metrics, tokens, readiness, unknown);
    for (auto start : {std::function<Result<void>()>([&] { return book.start(); }),
                       std::function<Result<void>()>([&] { return workers.start(); }),
                       std::function<Result<void>()>([&] { return dispatcher.start(); }),
                       std::function<Result<void>()>([&] { return housekeeping.start(); })}) {
        if (auto r = start(); !r) {
            ServerLog::error(u"cannot start: "_s + r.error().message);
            return 1;
        }
    }
    Api api(Api::Parts{tokens, readiness, dispatcher, workers, metrics, accessLog, self, m_o.noAuth});
    HttpServer http(api, m_o.http);
    metrics.setInFlightSource([&http] { return http.inFlight(); });
    if (auto r = http.start(m_o.host, m_o.port); !r) {
        ServerLog::error(u"cannot start: "_s + r.error().message);
        return 1;
    }
    if (!m_o.pidFile.isEmpty()) {
        QFile pid(m_o.pidFile);
        if (pid.open(QIODevice::WriteOnly | QIODevice::Truncate))
            pid.write(QByteArray::number(qint64(getpid())) + '\n');
        else
            ServerLog::warning(u"pid-file: cannot write %1"_s.arg(m_o.pidFile));
    }
    const QString listen = m_o.host.contains(u':') ? u"[%1]:%2"_s.arg(m_o.host).arg(http.port())
                                                   : u"%1:%2"_s.arg(m_o.host).arg(http.port());
    housekeeping.setListenAddress(listen);
    ServerLog::info(u"flashstock-server listening on http://%1 (pid %2): book %3, gate %4, %5 request threads, %6 "
                    u"book writers, expiry every %7 s, reconcile %8, auth %9"_s
                        .arg(listen).arg(getpid()).arg(profile->book.display(), gateText(*profile))
                        .arg(m_o.http.threads).arg(m_o.bookWriters).arg(m_o.housekeeping.expireEvery)
                        .arg(m_o.housekeeping.reconcileEvery > 0
                                 ? u"every %1 s"_s.arg(m_o.housekeeping.reconcileEvery) : u"off"_s,
                             m_o.noAuth ? u"OFF (--no-auth)"_s : u"bearer tokens (%1 valid)"_s.arg(
                                 tokens.current() ? tokens.current()->size() : 0)));

    const int signal = waitForStopSignal();
    api.startDraining();
    http.quiesce();
    // Said once draining holds: from this line on, a new request is answered 503.
    ServerLog::info(u"%1: draining (%2 requests in flight; no new connections)"_s.arg(
        QString::fromLatin1(sigabbrev_np(signal))).arg(http.inFlight()));
    // Past the drain, a stuck book or gate call must not keep the process: it exits anyway
    // (the book rolls back what never committed; the reconciler heals the gate).
    std::thread([] {
        QThread::msleep(kDrainMs + kStopGraceMs);
        ServerLog::warning(u"stopped: engine threads still busy past the drain; exiting anyway"_s);
        std::_Exit(0);
    }).detach();
    QElapsedTimer draining;
    draining.start();
    while (http.inFlight() > 0 && draining.elapsed() < kDrainMs)
        QThread::msleep(10);
    const qint64 left = http.inFlight();
    if (left > 0) {
        ServerLog::warning(u"drain: %1 requests still in flight after %2 s: answered 503 outcome_unknown"_s
                               .arg(left).arg(kDrainMs / 1000));
        http.answerParked(Api::unfinishedReply());
        QThread::msleep(200);
    }
    http.stop();
    dispatcher.stop();
    workers.stop();
    book.stop();
    housekeeping.stop();
    if (!m_o.pidFile.isEmpty())
        QFile::remove(m_o.pidFile);
    ServerLog::info(u"stopped after a drain of %1 ms"_s.arg(draining.elapsed()));
    return 0;
}

} // namespace flashstock::server
