#include "Housekeeping.h"

#include "EngineThread.h"
#include "ServerLog.h"
#include "ServerMetrics.h"
#include "UnknownOutcomes.h"
#include "gate/Gate.h"
#include "reconcile/Reconciler.h"
#include "store/AccessTokenStore.h"
#include "store/BookReplication.h"
#include "store/Database.h"
#include "store/DiscrepancyStore.h"
#include "store/ReconcilePassStore.h"
#include "store/SaleStore.h"

#include <QDateTime>
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
                           Published<AccessTokenSet> &tokens, Published<Readiness> &readiness,
                           UnknownOutcomes &unknown)
    : m_profile(std::move(profile))
    , m_plan(plan)
    , m_metrics(metrics)
    , m_tokens(tokens)
    , m_readiness(readiness)
    , m_unknown(unknown)
{
}

Housekeeping::~Housekeeping()
{
    stop();
}

Result<void> Housekeeping::start()
{
    auto tick = std::make_shared<qint64>(0);
    if (auto r = every(kTickSeconds, [this, tick](Engine &e) { refresh(e, (*tick)++); }); !r)
        return r;
    // Tokens and readiness are known before the first request is served.
    QElapsedTimer waited;
    waited.start();
    while ((!m_tokens.current() || !m_readiness.current()) && waited.elapsed() < 10000)
        QThread::msleep(5);
    if (m_plan.expireEvery > 0) {
        // An expirer: each pass also writes the server's heartbeat, so consoles see that
        // holds past their expiry are being released.
        auto r = every(m_plan.expireEvery, [this](Engine &e) {
            ExpirerId self{u"server"_s, qint64(m_plan.expireEvery) * 1000};
            {
                std::lock_guard lock(m_addressMutex);
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
        auto r = every(m_plan.reconcileEvery, [this, graceMs, reconciler](Engine &e) {
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
            m_metrics.reconcilePassed();
            logEngineWarnings(e, u"reconcile"_s);
        });
        if (!r)
            return r;
    }
    return {};
}

void Housekeeping::stop()
{
    m_loop.stop();
}

void Housekeeping::setListenAddress(const QString &address)
{
    std::lock_guard lock(m_addressMutex);
    m_listenAddress = address;
}

Result<void> Housekeeping::every(int seconds, std::function<void(Engine &)> work)
{
    return startWithEngine(m_loop, m_profile, [this, seconds, work](Engine &engine) {
        while (!m_loop.stopping()) {
            work(engine);
            m_loop.pause(std::chrono::seconds(seconds));
        }
    });
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
    resolveUnknown(engine);
    if (tick % kLevelsEvery == 0) {
        readBookFigures(engine);
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

void Housekeeping::resolveUnknown(Engine &engine)
{
    if (m_unknown.size() == 0 || !engine.gate())
        return;
    Reconciler reconciler(engine);
    const QHash<QString, QStringList> unknown = m_unknown.take();
    for (auto it = unknown.cbegin(); it != unknown.cend(); ++it) {
        ReconcileReport report;
        auto left = reconciler.resolveTokens(it.key(), *it, Reconciler::minSafeGraceMs(), report);
        m_unknown.putBack(it.key(), left ? *left : *it);
        if (!left)
            ServerLog::trouble(u"unknown-outcomes"_s, u"reserves of unknown outcome on %1 not resolved yet: %2"_s.arg(
                                                          it.key(), left.error().message));
        for (const Discrepancy &d : std::as_const(report.discrepancies))
            ServerLog::warning(u"reserve of unknown outcome: %1"_s.arg(d.detail));
        for (const QString &w : std::as_const(report.warnings))
            ServerLog::trouble(u"unknown-outcomes"_s, u"reserves of unknown outcome: "_s + w);
    }
    logEngineWarnings(engine, u"unknown outcomes"_s);
}

void Housekeeping::logBookRoom(const std::optional<WriteRefusal> &refused)
{
    if (refused && m_bookRefusedSince != refused->sinceMs)
        ServerLog::warning(u"book: %1; reserves answer unavailable (their units go back to the gate) until it has "
                           u"room"_s.arg(refused->message));
    else if (!refused && m_bookRefusedSince)
        ServerLog::info(u"book: writes commit again, %1 s after it first refused one"_s.arg(
            (QDateTime::currentMSecsSinceEpoch() - *m_bookRefusedSince) / 1000));
    m_bookRefusedSince = refused ? std::optional(refused->sinceMs) : std::nullopt;
}

void Housekeeping::readBookFigures(Engine &engine)
{
    // A figure that cannot be read keeps its last value; readiness says the book is down.
    if (auto pending = DiscrepancyStore(engine.database()).pendingCount())
        m_metrics.setPendingDiscrepancies(*pending);
    if (auto expiry = engine.expiryStatus())
        m_metrics.setExpiry(*expiry);
    if (auto pass = ReconcilePassStore(engine.database()).last())
        m_metrics.setLastReconcilePass(*pass);
}

void Housekeeping::probe(Engine &engine)
{
    // What is down goes to /readyz, which any client may read; where it is and why, only to
    // the log.
    Readiness r;
    if (auto now = engine.database().nowMs()) {
        r.book = true;
        noteReplication(engine, r);
    } else {
        r.down << u"book: not answering"_s;
        ServerLog::trouble(u"ready-book"_s, u"readiness: book: "_s + now.error().message);
    }
    // A book that refused a write for want of room (SQLite's disk full) is not ready until a
    // write of this process commits on it again.
    const std::optional<WriteRefusal> refused = Database::writeRefusal(engine.database().url());
    if (refused) {
        r.book = false;
        r.down << u"book: full (refusing writes)"_s;
    }
    logBookRoom(refused);
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
    m_metrics.setReadiness(r.book, r.gateConfigured ? std::optional<bool>(r.gate && r.scripts) : std::nullopt);
    m_readiness.publish(r);
}

void Housekeeping::noteReplication(Engine &engine, Readiness &r)
{
    auto read = readBookReplication(engine.database());
    if (!read) {
        ServerLog::trouble(u"book-replication"_s, u"book: replication not read: "_s + read.error().message);
        return;
    }
    r.replication = *read;
    if (!*read)
        return;
    const BookReplication &now = **read;
    m_metrics.setBookReplication(now);
    const std::optional<BookReplication> before = std::exchange(m_replication, now);
    if (now.warns())
        ServerLog::trouble(u"book-alone"_s, u"book: "_s + now.describe()); // again every 10 s while it lasts
    else if (before && (before->warns() || before->primary != now.primary))
        ServerLog::info(u"book: "_s + now.describe());
}

} // namespace flashstock::server
