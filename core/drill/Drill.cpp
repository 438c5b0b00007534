#include "drill/Drill.h"

#include "Engine.h"
#include "drill/DrillGateFaults.h"
#include "drill/DrillQuiesce.h"
#include "drill/DrillShared.h"
#include "gate/Gate.h"
#include "store/Database.h"

#include <QElapsedTimer>
#include <QSet>
#include <QThread>

#include <algorithm>
#include <thread>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr int kControllerTickMs = 5;
constexpr int kExpireEveryMs = 250;
/// After the sale, how long past the hold to wait for every hold to expire.
constexpr qint64 kExpireSlackMs = 30000;
constexpr int kMaxUnhealedListed = 5;

double percentileMs(std::vector<qint64> &us, double p)
{
    if (us.empty())
        return 0;
    const size_t k = std::min(us.size() - 1, size_t(double(us.size()) * p));
    std::nth_element(us.begin(), us.begin() + qsizetype(k), us.end());
    return double(us[k]) / 1000.0;
}

void markUnhealed(FaultTally &t, const QString &what)
{
    if (t.unhealed.size() < kMaxUnhealedListed)
        t.unhealed << what;
}

} // namespace

Drill::Drill(DrillOptions options)
    : m_options(std::move(options))
{
    if (m_options.validate())
        m_schedule = DrillSchedule::build(m_options);
}

Result<DrillReport> Drill::run()
{
    if (auto v = m_options.validate(); !v)
        return std::unexpected(v.error());
    const DrillOptions &o = m_options;
    QElapsedTimer total;
    total.start();
    auto progress = [&](const QString &phase, const DrillShared *s, double saleS) {
        if (!o.progress)
            return;
        DrillProgress p;
        p.buyers = o.buyers;
        p.phase = phase;
        p.elapsedS = double(total.elapsed()) / 1000.0;
        if (s) {
            p.answered = s->answered.load();
            p.reservedUnits = s->reservedUnits.load();
            p.paidUnits = s->paidUnits.load();
            p.faults = s->injected.load();
            p.ratePerS = saleS > 0 ? double(p.answered) / saleS : 0;
        }
        o.progress(p);
    };

    auto opened = Engine::open(EngineOptions{o.db, o.redis, Actor{o.operatorName, u"drill"_s}});
    if (!opened)
        return std::unexpected(opened.error());
    Engine &control = **opened;
    if (control.gate()) {
        if (auto c = control.gate()->connect(); !c)
            return std::unexpected(c.error());
    }
    if (auto added = control.addSku(o.sku, o.stock); !added) {
        Error e = added.error();
        if (e.message.contains(u"already exists"_s))
            e.message += u": a drill creates its own SKU; pick a fresh name (e.g. with a timestamp)"_s;
        return std::unexpected(e);
    }

    DrillReport report;
    report.sku = o.sku;
    report.stock = o.stock;
    report.buyers = o.buyers;
    report.concurrency = o.concurrency;
    report.payRatio = o.payRatio;
    report.holdSeconds = o.holdSeconds;
    report.seed = o.seed;
    report.book = o.db.display();
    report.gate = control.gate() ? control.gate()->url().toDisplayString() : u"none"_s;
    report.gateConfigured = control.gate() != nullptr;
    report.scheduleDigest = m_schedule.digest();
    for (auto it = m_schedule.scheduled.cbegin(); it != m_schedule.scheduled.cend(); ++it)
        report.faults[it.key()].scheduled = it.value();
    for (auto it = o.faults.rates.cbegin(); it != o.faults.rates.cend(); ++it) {
        if (!report.gateConfigured && needsGate(it.key()))
            report.notes << u"%1 left out: it needs a gate and this drill runs book-only"_s.arg(faultName(it.key()));
        else
            report.faults[it.key()]; // listed even if it never fired
    }
    report.gateWarnings += control.takeWarnings().size();

    // --- the sale ---------------------------------------------------------------------------
    DrillShared shared(o, m_schedule);
    std::optional<DrillGateFaults> gateFaults;
    if (control.gate())
        gateFaults.emplace(control.gate()->url(), o.embeddedDataDir);
    QElapsedTimer sale;
    sale.start();
    if (!m_schedule.events.empty())
        shared.holdFrom = m_schedule.events.front().beforeBuyer;
    std::vector<std::thread> workers;
    workers.reserve(size_t(o.concurrency));
    for (int w = 0; w < o.concurrency; ++w)
        workers.emplace_back([&shared] { runDrillWorker(shared); });

    size_t nextEvent = 0;
    qint64 lastExpire = 0, lastProgress = 0;
    while (shared.workersDone.load() < o.concurrency) {
        if (!shared.stop.load() && o.cancelled && o.cancelled()) {
            shared.stop = true;
            report.cancelled = true;
            report.notes << u"cancelled after %1 of %2 buyers; the book and gate were wound down as after a full run"_s
                                .arg(qMin(shared.next.load(), o.buyers))
                                .arg(o.buyers);
        }
        while (nextEvent < m_schedule.events.size()
               && shared.next.load() >= m_schedule.events[nextEvent].beforeBuyer) {
            const GlobalEvent &e = m_schedule.events[nextEvent++];
            if (!gateFaults) {
                shared.holdFrom = std::numeric_limits<qint64>::max();
                continue;
            }
            FaultRecord rec{e.kind, e.beforeBuyer, {}, {}, 0, true, {}};
            if (e.kind == FaultKind::RedisRestart) {
                auto r = gateFaults->restart();
                rec.ok = r.has_value();
                rec.detail = r ? *r : r.error().message;
                report.faults[e.kind].note = rec.detail;
            } else {
                auto r = gateFaults->flushScripts();
                rec.ok = r.has_value();
                rec.detail = r ? u"SCRIPT FLUSH"_s : r.error().message;
            }
            rec.doneNs = drillNowNs();
            shared.holdFrom = nextEvent < m_schedule.events.size() ? m_schedule.events[nextEvent].beforeBuyer
                                                                   : std::numeric_limits<qint64>::max();
            if (rec.ok)
                shared.addRecord(rec);
            else
                report.notes << u"%1 before buyer %2 could not be injected: %3"_s.arg(faultName(e.kind))
                                    .arg(e.beforeBuyer).arg(rec.detail);
        }
        const qint64 now = sale.elapsed();
        if (now - lastExpire >= kExpireEveryMs) {
            // Abandoned holds come back while the sale runs, as they would in production.
            if (auto ex = control.expire(); !ex)
                report.notes << u"expiry during the sale failed once: %1"_s.arg(ex.error().message);
            report.gateWarnings += control.takeWarnings().size();
            lastExpire = sale.elapsed();
        }
        if (now - lastProgress >= o.progressIntervalMs) {
            progress(u"sale"_s, &shared, double(now) / 1000.0);
            lastProgress = now;
        }
        QThread::msleep(kControllerTickMs);
    }
    for (std::thread &t : workers)
        t.join();
    report.saleSeconds = double(sale.nsecsElapsed()) / 1e9;
    progress(u"sale"_s, &shared, report.saleSeconds);

    // --- every hold expires -------------------------------------------------------------------
    progress(u"expire"_s, &shared, report.saleSeconds);
    QElapsedTimer waiting;
    waiting.start();
    for (;;) {
        if (auto ex = control.expire(); !ex)
            report.notes << u"expiry failed once: %1"_s.arg(ex.error().message);
        auto levels = control.book().levels(o.sku);
        if (!levels)
            return std::unexpected(levels.error());
        if (levels->locked == 0)
            break;
        if (waiting.elapsed() > o.holdSeconds * 1000 + kExpireSlackMs) {
            report.notes << u"%1 units still locked %2 s after the sale (holds of %3 s)"_s.arg(levels->locked)
                                .arg(waiting.elapsed() / 1000).arg(o.holdSeconds);
            break;
        }
        QThread::msleep(100);
    }
    report.gateWarnings += control.takeWarnings().size();

    // --- late payments arrive after their holds closed ------------------------------------------
    progress(u"late-payments"_s, &shared, report.saleSeconds);
    QHash<QString, Outcome> lateAnswers;
    for (const FaultRecord &r : shared.records) {
        if (r.kind != FaultKind::LatePayment)
            continue;
        auto c = control.confirm(r.order, u"late-%1"_s.arg(r.buyer));
        if (!c) {
            shared.paymentOutcomes[u"error_"_s + errorCodeName(c.error().code)]++;
            continue;
        }
        shared.paymentOutcomes[outcomeWord(c->outcome)]++;
        lateAnswers.insert(r.order, c->outcome);
        if (c->outcome == Outcome::Paid)
            shared.paidUnits += 1;
    }

    // --- the reconciler to quiescence ---------------------------------------------------------
    progress(u"reconcile"_s, &shared, report.saleSeconds);
    auto quiet = reconcileToQuiescence(control, int(o.reconcileMaxPasses));
    if (!quiet)
        report.notes << u"the reconciler failed: %1"_s.arg(quiet.error().message);
    else
        report.reconcile = *quiet;
    if (quiet && !quiet->quiet)
        report.notes << u"the reconciler still found something new after %1 passes"_s.arg(quiet->passes);
    report.gateWarnings += control.takeWarnings().size();

    // --- the checks, from the book and the gate themselves ----------------------------------------
    progress(u"check"_s, &shared, report.saleSeconds);
    auto levels = control.book().levels(o.sku);
    if (!levels)
        return std::unexpected(levels.error());
    auto check = control.book().check();
    if (!check)
        return std::unexpected(check.error());
    report.check = *check;
    report.sold = levels->sold;
    report.bookAvailable = levels->available;
    report.bookLocked = levels->locked;
    report.bookTotal = levels->total;
    QSet<QString> openTokens, openOrders;
    if (control.gate()) {
        const GateSide side = control.gateLevels(o.sku);
        report.gateAvailable = side.available;
        report.i5 = side.reachable && side.available == levels->available;
        if (!side.reachable)
            report.i5Detail = u"I5: the gate is unreachable after the drill: %1"_s.arg(side.error);
        else if (!report.i5)
            report.i5Detail = u"I5: gate available %1, book available %2 for %3 after quiescence"_s.arg(side.available)
                                  .arg(levels->available).arg(o.sku);
        auto tokens = control.gate()->openTokens(o.sku);
        if (tokens) {
            for (const GateToken &t : *tokens) {
                openTokens.insert(t.token);
                openOrders.insert(t.order);
            }
        } else {
            report.notes << u"open tokens unreadable: %1"_s.arg(tokens.error().message);
        }
    }
    report.reserveOutcomes = shared.reserveOutcomes;
    report.paymentOutcomes = shared.paymentOutcomes;
    report.reservedUnits = shared.reservedUnits.load();
    report.paidUnits = shared.paidUnits.load();
    report.gateWarnings += shared.gateWarnings.load();
    report.oversold = std::max<qint64>(0, std::max(report.sold, report.paidUnits) - o.stock);
    report.stuck = levels->locked
        + (control.gate() && report.gateAvailable >= 0 ? std::max<qint64>(0, levels->available - report.gateAvailable)
                                                        : 0);
    report.throughputPerS = report.saleSeconds > 0 ? double(shared.answered.load()) / report.saleSeconds : 0;
    report.unitsPerS = report.saleSeconds > 0 ? double(report.reservedUnits) / report.saleSeconds : 0;
    report.p50Ms = percentileMs(shared.latenciesUs, 0.50);
    report.p99Ms = percentileMs(shared.latenciesUs, 0.99);
    for (const QString &e : std::as_const(shared.errors))
        report.notes << u"unexpected: %1"_s.arg(e);

    // --- each fault: healed? --------------------------------------------------------------------
    Book &book = control.book();
    auto statusOf = [&](const QString &order) -> std::optional<OrderStatus> {
        auto s = book.orderStatus(order);
        return s ? *s : std::nullopt;
    };
    for (const FaultRecord &r : shared.records) {
        FaultTally &t = report.faults[r.kind];
        ++t.injected;
        bool healed = false;
        switch (r.kind) {
        case FaultKind::CrashAfterGate: {
            const auto s = statusOf(r.order);
            healed = !openTokens.contains(r.token) && (!s || *s == OrderStatus::Abandoned);
            break;
        }
        case FaultKind::LostCallback: healed = statusOf(r.order) == OrderStatus::Closed; break;
        case FaultKind::DuplicateCallback: {
            auto rows = book.ledgerOfOrder(r.order);
            auto refunds = book.refundCount(r.order);
            const qint64 confirms = rows ? std::count_if(rows->cbegin(), rows->cend(), [](const LedgerRow &l) {
                return l.operation == u"CONFIRM"_s;
            }) : -1;
            healed = statusOf(r.order) == OrderStatus::Paid && confirms == 1 && refunds && *refunds == 0
                && shared.paidAnswersByOrder.value(r.order) == 1;
            break;
        }
        case FaultKind::LatePayment: {
            auto refunds = book.refundCount(r.order);
            healed = lateAnswers.value(r.order, Outcome::Paid) == Outcome::RefundRequired && refunds && *refunds == 1
                && statusOf(r.order) == OrderStatus::Closed;
            break;
        }
        case FaultKind::DbError: {
            // Given back by the engine at once, or (if that give-back itself failed, e.g. a
            // Redis restart at the same moment) by the reconciler, which fences the order.
            const auto s = statusOf(r.order);
            healed = (!s || *s == OrderStatus::Abandoned) && !openOrders.contains(r.order);
            break;
        }
        case FaultKind::RedisRestart:
            healed = shared.lastGateAnswerSentNs.load() > r.doneNs && report.i5;
            break;
        case FaultKind::ScriptFlush: healed = shared.lastGateAnswerSentNs.load() > r.doneNs; break;
        }
        if (healed)
            ++t.healed;
        else
            markUnhealed(t, r.order.isEmpty() ? u"event before buyer %1"_s.arg(r.buyer) : r.order);
    }
    report.totalSeconds = double(total.elapsed()) / 1000.0;
    return report;
}

} // namespace flashstock
