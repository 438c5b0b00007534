#include "Housekeeping.h"

#include "EngineThread.h"
#include "ServerLog.h"
#include "ServerMetrics.h"
#include "gate/Gate.h"
#include "reconcile/Reconciler.h"
#include "store/AccessTokenStore.h"
#include "store/Database.h"
#include "store/SaleStore.h"

#include <QElapsedTimer>
#include <QThread>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

/// The refresher's tick (the tokens and readiness are read every tick), and how many ticks
/// apart the levels are.
constexpr int kTickSeconds = 1;
constexpr qint64 kLevelsEvery = 5;

} // namespace

Housekeeping::Housekeeping(ResolvedProfile profile, HousekeepingPlan plan, ServerMetrics &metrics,
                           Published<AccessTokenSet> &tokens, Published<Readiness> &readiness)
    : m_profile(std::move(profile))
    , m_plan(plan)
    , m_metrics(metrics)
    , m_tokens(tokens)
    , m_readiness(readiness)
{
}

Housekeeping::~Housekeeping()
{
    stop();
}

Result<void> Housekeeping::start()
{
    auto tick = std::make_shared<qint64>(0);
    if (auto r = every(u"refresher"_s, kTickSeconds, [this, tick](Engine &e) { refresh(e, (*tick)++); }); !r)
        return r;
    // Tokens and readiness are known before the first request is served.
    QElapsedTimer waited;
    waited.start();
    while ((!m_tokens.current() || !m_readiness.current()) && waited.elapsed() < 10000)
        QThread::msleep(5);
    if (m_plan.expireEvery > 0) {
        // An expirer: each pass also writes the server's heartbeat, so consoles see that
        // holds past their expiry are being released.
        auto r = every(u"expiry"_s, m_plan.expireEvery, [this](Engine &e) {
            ExpirerId self{u"server"_s, qint64(m_plan.expireEvery) * 1000};
            {
                std::lock_guard lock(m_mutex);
                self.address = m_listenAddress;
            }
            auto pass = e.expireAsExpirer(self);
            if (!pass) {
                ServerLog::trouble(u"expiry"_s, u"expiry: %1"_s.arg(pass.error().message));
            } else {
                m_metrics.expired(pass->released.size());
                if (!pass->heartbeatProblem.isEmpty())
                    ServerLog::trouble(u"expiry-heartbeat"_s, u"expiry: heartbeat not written: %1"_s.arg(
                                                                  pass->heartbeatProblem));
            }
            logEngineWarnings(e, u"expiry"_s);
        });
        if (!r)
            return r;
    }
    if (m_plan.reconcileEvery > 0) {
        const qint64 graceMs = qint64(m_plan.reconcileGraceSeconds) * 1000;
        auto reconciler = std::make_shared<std::unique_ptr<Reconciler>>();
        auto r = every(u"reconcile"_s, m_plan.reconcileEvery, [this, graceMs, reconciler](Engine &e) {
            if (!*reconciler)
                *reconciler = std::make_unique<Reconciler>(e);
            auto report = (*reconciler)->runPass(graceMs);
            if (!report) {
                ServerLog::trouble(u"reconcile"_s, u"reconcile: %1"_s.arg(report.error().message));
                return;
            }
            for (const Discrepancy &d : std::as_const(report->discrepancies))
                ServerLog::warning(u"reconcile: %1 on %2 (%3, delta %4): %5"_s.arg(
                    discrepancyKindName(d.kind), d.sku, discrepancyStatusName(d.status)).arg(d.delta).arg(d.detail));
            for (const QString &w : std::as_const(report->warnings))
                ServerLog::trouble(u"reconcile-warning"_s, u"reconcile: "_s + w);
            m_metrics.setPendingDiscrepancies(report->stillPending);
            logEngineWarnings(e, u"reconcile"_s);
        });
        if (!r)
            return r;
    }
    return {};
}

void Housekeeping::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    for (auto &t : m_threads)
        t->join();
    m_threads.clear();
}

void Housekeeping::setListenAddress(const QString &address)
{
    std::lock_guard lock(m_mutex);
    m_listenAddress = address;
}

Result<void> Housekeeping::every(const QString &name, int seconds, std::function<void(Engine &)> work)
{
    auto thread = std::make_unique<EngineThread>(name, m_profile, [this, seconds, work](Engine &engine) {
        std::unique_lock lock(m_mutex);
        while (!m_stopping) {
            lock.unlock();
            work(engine);
            lock.lock();
            m_wake.wait_for(lock, std::chrono::seconds(seconds), [&] { return m_stopping; });
        }
    });
    if (auto r = thread->start(); !r)
        return r;
    m_threads.push_back(std::move(thread));
    return {};
}

void Housekeeping::refresh(Engine &engine, qint64 tick)
{
    // First, so a slow probe never makes them old. A snapshot counts from when its read began.
    const auto readAt = std::chrono::steady_clock::now();
    if (auto valid = AccessTokenStore(engine.database()).valid()) {
        m_tokens.publish(AccessTokenSet(*valid), readAt);
        if (std::exchange(m_tokensUnread, false))
            ServerLog::info(u"tokens: read from the book again; bearer tokens are taken again"_s);
    } else {
        m_tokensUnread = true;
        ServerLog::trouble(u"tokens"_s, u"tokens: cannot read the bearer tokens from the book (%1); the last ones "
                                        u"read are taken until they are %2 s old, then none"_s.arg(
                                            valid.error().message, QString::number(kTokensTrustedFor.count())));
    }
    probe(engine);
    if (tick % kLevelsEvery == 0) {
        auto sales = SaleStore(engine.database()).list();
        if (!sales)
            return;
        QList<SkuLevels> open;
        for (const Sale &s : std::as_const(*sales))
            if (s.status == SaleStatus::Open)
                if (auto levels = engine.book().levels(s.sku))
                    open << *levels;
        m_metrics.setSaleLevels(open);
    }
}

void Housekeeping::probe(Engine &engine)
{
    // What is down goes to /readyz, which any client may read; where it is and why, only to
    // the log.
    Readiness r;
    if (auto now = engine.database().nowMs()) {
        r.book = true;
    } else {
        r.down << u"book: not answering"_s;
        ServerLog::trouble(u"ready-book"_s, u"readiness: book: "_s + now.error().message);
    }
    Gate *gate = engine.gate();
    r.gateConfigured = gate != nullptr;
    if (gate) {
        GateHealth h = gate->health();
        if (h.reachable && !h.scriptsLoaded) {
            // The server lost its script cache (flush, restart): a new connection loads them,
            // as the dispatcher's next reserve would.
            const RedisUrl url = gate->url(); // attachGate replaces the Gate that holds it
            engine.attachGate(url);
            h = engine.gate()->health();
        }
        r.gate = h.reachable;
        r.scripts = h.scriptsLoaded;
        if (!h.reachable || !h.scriptsLoaded) {
            r.down << (h.reachable ? u"gate: scripts not loaded"_s : u"gate: not answering"_s);
            ServerLog::trouble(u"ready-gate"_s, u"readiness: gate: "_s + h.detail);
        }
    }
    m_readiness.publish(r);
}

} // namespace flashstock::server
