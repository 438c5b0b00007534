#include "drill/Drill.h"

#include "Engine.h"
#include "Identifiers.h"
#include "drill/DrillGateFaults.h"
#include "drill/DrillProbe.h"
#include "drill/DrillQuiesce.h"
#include "drill/DrillShared.h"
#include "gate/Gate.h"
#include "gate/HashSlot.h"
#include "store/BookReplication.h"
#include "store/BookWriters.h"
#include "store/Database.h"
#include "store/SaleStore.h"

#include <QDateTime>
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
/// The probe's SKU: units enough for a reserve every 100 ms held for an hour.
constexpr qint64 kProbeStock = 1'000'000;
/// How often the book's replication is read during a sale with a formation.
constexpr qint64 kReplicationEveryMs = 1000;
/// How long the next gate-wide fault waits for the writes to come back after the last one.
constexpr qint64 kRecoveryWaitNs = 180'000'000'000;

/// What one gate-wide fault cost, from the probe, the replication samples and the book.
struct FaultCost {
    std::optional<double> outageSeconds; ///< from the fault to the first reserve that succeeded after it
    double aloneSeconds = 0;             ///< the book's primary sampled writing alone meanwhile
    qint64 acknowledgedLost = 0;         ///< answers given meanwhile that the book lost
};

double percentileMs(std::vector<qint64> &us, double p)
{
    if (us.empty())
        return 0;
    const size_t k = std::min(us.size() - 1, size_t(double(us.size()) * p));
    std::nth_element(us.begin(), us.begin() + qsizetype(k), us.end());
    return double(us[k]) / 1000.0;
}

/// The write probe's SKU for a drill on `sku`: `SKU.probe`, or on a Redis Cluster the first
/// `SKU.probeN` whose gate keys share the sale's hash slot, so the probe meets what the
/// buyers meet (a master failover of that slot included).
QString probeSkuFor(const QString &sku, bool cluster)
{
    if (!cluster)
        return sku + u".probe"_s;
    const int slot = HashSlot::ofSku(sku);
    for (int n = 0;; ++n)
        if (const QString probe = u"%1.probe%2"_s.arg(sku).arg(n); HashSlot::ofSku(probe) == slot)
            return probe;
}

void markUnhealed(FaultTally &t, const QString &what)
{
    if (t.unhealed.size() < kMaxUnhealedListed)
        t.unhealed << what;
}

/// One run of the drill: its phases in order, and what they hand each other.
class Rehearsal {
public:
    Rehearsal(const DrillOptions &options, const DrillSchedule &schedule)
        : m_o(options)
        , m_schedule(schedule)
        , m_shared(options, schedule)
    {
        m_total.start();
    }

    Result<DrillReport> run()
    {
        if (auto r = setUp(); !r)
            return std::unexpected(r.error());
        runSale();
        healFormation();
        if (auto r = expireAll(); !r)
            return std::unexpected(r.error());
        deliverLatePayments();
        reconcile();
        if (auto r = check(); !r)
            return std::unexpected(r.error());
        judgeFaults();
        m_report.totalSeconds = double(m_total.elapsed()) / 1000.0;
        return m_report;
    }

private:
    /// Opens the controller's engine, creates the SKU and describes the run in the report.
    Result<void> setUp();
    /// The sale: the workers serve every buyer while this thread fires the gate-wide faults,
    /// expires holds and reports progress.
    void runSale();
    /// Fires the gate-wide events due before the next buyer.
    void fireGateEvents(std::optional<DrillGateFaults> &gateFaults, size_t &nextEvent);
    /// Every hold expires (or the wait gives up, noted).
    Result<void> expireAll();
    /// The late payments arrive, after their holds closed.
    void deliverLatePayments();
    /// The reconciler runs to quiescence.
    void reconcile();
    /// The invariants and figures, from the book and the gate themselves.
    Result<void> check();
    /// Each fault: healed or not, and what each gate-wide one cost.
    void judgeFaults();
    /// The probe SKU's part of the checks: its locked units and I5.
    Result<void> probeChecks();
    bool healed(const FaultRecord &r, const FaultCost &cost);
    /// The cost of each gate-wide record, in the order of m_shared.records (empty for others).
    std::vector<std::optional<FaultCost>> costs() const;
    /// The formation made whole again after the sale (the next drill finds it so).
    void healFormation();
    /// Steady-clock ns of a wall-clock instant (ms since the epoch).
    static qint64 steadyNsOf(qint64 wallMs);
    /// Whether the writes came back after the last gate-wide fault (or it waited too long, or
    /// the probe could not run).
    bool recovered() const;

    void progress(const QString &phase);
    void drainWarnings() { m_report.gateWarnings += m_control->takeWarnings().size(); }

    const DrillOptions &m_o;
    const DrillSchedule &m_schedule;
    DrillShared m_shared;
    DrillReport m_report;
    std::unique_ptr<Engine> m_control; ///< the controller's engine: setup, expiry, reconcile, checks
    QElapsedTimer m_total;
    QElapsedTimer m_sale;
    QHash<QString, Outcome> m_lateAnswers;   ///< late-payment orders: the answer to their payment
    QSet<QString> m_openTokens, m_openOrders; ///< the gate's open tokens after quiescence
    QString m_probeSku;                       ///< --via with gate-wide faults: the probe's SKU
    std::unique_ptr<DrillProbe> m_probe;      ///< during the sale
    qint64 m_lastFaultNs = 0;                 ///< when the last gate-wide fault took effect
    /// With a formation: the book's replication read every second of the sale (when, state).
    std::vector<std::pair<qint64, BookReplication::State>> m_replication;
    std::vector<qint64> m_lostAtNs;           ///< when each answer the book lost was given
    qint64 m_saleExpiryFailures = 0;          ///< expiry passes during the sale that failed
    QString m_saleExpiryFirstError;
};

void Rehearsal::progress(const QString &phase)
{
    if (!m_o.progress)
        return;
    DrillProgress p;
    p.buyers = m_o.buyers;
    p.phase = phase;
    p.elapsedS = double(m_total.elapsed()) / 1000.0;
    p.answered = m_shared.answered.load();
    p.reservedUnits = m_shared.reservedUnits.load();
    p.paidUnits = m_shared.paidUnits.load();
    p.faults = m_shared.injected.load();
    const double saleS = m_report.saleSeconds > 0 ? m_report.saleSeconds : double(m_sale.elapsed()) / 1000.0;
    p.ratePerS = saleS > 0 ? double(p.answered) / saleS : 0;
    m_o.progress(p);
}

Result<void> Rehearsal::setUp()
{
    auto opened = Engine::open(EngineOptions{m_o.db, m_o.redis, Actor{m_o.operatorName, u"drill"_s}});
    if (!opened)
        return std::unexpected(opened.error());
    m_control = std::move(*opened);
    if (m_control->gate()) {
        if (auto c = m_control->gate()->connect(); !c)
            return std::unexpected(c.error());
    }
    if (auto safe = checkDrillTarget(*m_control); !safe)
        return safe;
    if (auto added = m_control->addSku(m_o.sku, m_o.stock); !added) {
        Error e = added.error();
        if (e.message.contains(u"already exists"_s))
            e.message += u": a drill creates its own SKU; pick a fresh name (e.g. with a timestamp)"_s;
        return std::unexpected(e);
    }
    m_report.sku = m_o.sku;
    m_report.stock = m_o.stock;
    m_report.buyers = m_o.buyers;
    m_report.concurrency = m_o.concurrency;
    m_report.payRatio = m_o.payRatio;
    m_report.holdSeconds = m_o.holdSeconds;
    m_report.seed = m_o.seed;
    m_report.book = m_o.db.display();
    m_report.gate = m_control->gate() ? m_control->gate()->url().toDisplayString() : u"none"_s;
    m_report.gateConfigured = m_control->gate() != nullptr;
    m_report.scheduleDigest = m_schedule.digest();
    if (m_o.via) {
        m_report.via = m_o.via->url;
        // A server on another book or gate, a refused token or no server at all: a broken
        // setup, said before any buyer is sent.
        if (m_o.via->checkServer)
            if (auto ok = m_o.via->checkServer(m_o.sku); !ok)
                return ok;
        // Gate-wide faults: a probe SKU whose reserves time each fault's write outage.
        if (!m_schedule.events.empty()) {
            const QString probe = probeSkuFor(m_o.sku, m_o.redis && m_o.redis->isCluster());
            if (!checkSkuId(probe)) {
                m_report.notes << u"no write probe: the SKU id %1 is too long for %2"_s.arg(m_o.sku, probe);
            } else if (auto added = m_control->addSku(probe, kProbeStock); !added) {
                return std::unexpected(added.error());
            } else {
                m_probeSku = probe;
                m_report.probeSku = probe;
            }
        }
    }
    for (auto it = m_schedule.scheduled.cbegin(); it != m_schedule.scheduled.cend(); ++it)
        m_report.faults[it.key()].scheduled = it.value();
    for (auto it = m_o.faults.rates.cbegin(); it != m_o.faults.rates.cend(); ++it) {
        if (const QString why = m_o.leftOutReason(it.key()); !why.isEmpty())
            m_report.notes << u"%1 left out: %2"_s.arg(faultName(it.key()), why);
        else
            m_report.faults[it.key()]; // listed even if it never fired
    }
    drainWarnings();
    return {};
}

void Rehearsal::runSale()
{
    std::optional<DrillGateFaults> gateFaults;
    if (m_control->gate())
        gateFaults.emplace(m_control->gate()->url(), m_o.embeddedDataDir);
    if (gateFaults && m_o.via)
        gateFaults->setKillEveryClient(true); // the server's connections are the ones that count
    m_sale.start();
    if (!m_schedule.events.empty())
        m_shared.holdFrom = m_schedule.events.front().beforeBuyer;
    // The workers' book work goes to the book writers (group commit), as a server's does.
    // The broken-engine rehearsal keeps each worker's own book: its naive take is per book.
    std::optional<BookWriters> writers;
    if (!m_o.naiveBookForTesting && !m_o.via) { // with --via the server's own writers do the book work
        writers.emplace(m_o.db, Actor{m_o.operatorName, u"drill"_s}, m_o.bookWriters);
        writers->setWriteFaultsForTesting(&m_shared.dbErrors);
        if (auto started = writers->start(); started) {
            m_shared.writers = &*writers;
        } else {
            m_report.notes << u"book writers did not start (%1): each worker used its own connection"_s.arg(
                started.error().message);
            writers.reset();
        }
    }
    if (!m_probeSku.isEmpty()) {
        m_probe = std::make_unique<DrillProbe>(m_o.via->channels, m_probeSku, m_o.holdSeconds);
        m_probe->start();
    }
    const bool formation = m_o.via && m_o.via->formationFault;
    std::vector<std::thread> workers;
    workers.reserve(size_t(m_o.concurrency));
    for (int w = 0; w < m_o.concurrency; ++w)
        workers.emplace_back([this] { runDrillWorker(m_shared); });

    size_t nextEvent = 0;
    qint64 lastExpire = 0, lastProgress = 0, lastReplication = -kReplicationEveryMs;
    while (m_shared.workersDone.load() < m_o.concurrency) {
        if (!m_shared.stop.load() && m_o.cancelled && m_o.cancelled()) {
            m_shared.stop = true;
            m_report.cancelled = true;
            m_report.notes << u"cancelled after %1 of %2 buyers; the book and gate were wound down as after a full "
                              u"run"_s.arg(qMin(m_shared.next.load(), m_o.buyers))
                                  .arg(m_o.buyers);
        }
        fireGateEvents(gateFaults, nextEvent);
        const qint64 now = m_sale.elapsed();
        if (now - lastExpire >= kExpireEveryMs) {
            // Abandoned holds come back while the sale runs, as they would in production.
            if (auto ex = m_control->expire(); !ex && m_saleExpiryFailures++ == 0)
                m_saleExpiryFirstError = ex.error().message;
            drainWarnings();
            lastExpire = m_sale.elapsed();
        }
        if (now - lastProgress >= m_o.progressIntervalMs) {
            progress(u"sale"_s);
            lastProgress = now;
        }
        if (formation && now - lastReplication >= kReplicationEveryMs) {
            if (auto rep = readBookReplication(m_control->database()); rep && *rep)
                m_replication.emplace_back(drillNowNs(), (*rep)->state());
            lastReplication = m_sale.elapsed();
        }
        QThread::msleep(kControllerTickMs);
    }
    for (std::thread &t : workers)
        t.join();
    if (m_saleExpiryFailures > 0)
        m_report.notes << u"expiry during the sale failed %1 time(s), the first: %2"_s.arg(m_saleExpiryFailures)
                              .arg(m_saleExpiryFirstError);
    if (m_probe) {
        // The last fault's outage too: the probe goes on until the writes are back.
        while (!recovered())
            QThread::msleep(kControllerTickMs);
        m_probe->stop();
        if (!m_probe->problem().isEmpty())
            m_report.notes << u"the write probe did not run: %1"_s.arg(m_probe->problem());
    }
    m_report.saleSeconds = double(m_sale.nsecsElapsed()) / 1e9;
    if (writers) {
        const BookWriters::Stats stats = writers->stats();
        m_report.bookBatches = stats.batches;
        m_report.bookOrders = stats.orders;
        m_report.largestBookBatch = stats.largest;
        m_shared.writers = nullptr;
        writers->stop();
    }
    progress(u"sale"_s);
}

void Rehearsal::fireGateEvents(std::optional<DrillGateFaults> &gateFaults, size_t &nextEvent)
{
    while (nextEvent < m_schedule.events.size() && m_shared.next.load() >= m_schedule.events[nextEvent].beforeBuyer) {
        // One fault at a time: the next waits until the writes came back after the last.
        if (!recovered())
            return;
        const GlobalEvent &e = m_schedule.events[nextEvent++];
        if (!gateFaults && e.kind != FaultKind::ServerKill && !isFormationFault(e.kind)) {
            m_shared.holdFrom = std::numeric_limits<qint64>::max();
            continue;
        }
        FaultRecord rec{e.kind, e.beforeBuyer, {}, {}, 0, true, {}};
        const auto releaseBuyers = [&] {
            m_shared.holdFrom = nextEvent < m_schedule.events.size() ? m_schedule.events[nextEvent].beforeBuyer
                                                                     : std::numeric_limits<qint64>::max();
        };
        Result<QString> done = u"SCRIPT FLUSH"_s;
        if (isFormationFault(e.kind) || (e.kind == FaultKind::ServerKill && m_o.via->formationFault)) {
            // Acted out on the formation, which recovers by itself; the buyers go on at once.
            auto acted = m_o.via->formationFault(e.kind);
            if (acted) {
                rec.startNs = steadyNsOf(acted->atMs);
                rec.downNs = rec.startNs;
                done = acted->detail;
            } else {
                done = std::unexpected(acted.error());
            }
        } else if (e.kind == FaultKind::ServerKill) {
            // The buyers go on once the server is gone (not before: a buyer answered by the
            // old server would not show that the new one serves), retrying until it answers.
            done = m_o.via->killServer([&] {
                rec.downNs = drillNowNs();
                releaseBuyers();
            });
        } else if (e.kind == FaultKind::RedisRestart) {
            done = gateFaults->restart();
        } else if (e.kind == FaultKind::NodeFailover) {
            // The buyers go on while the master is down: they meet gate_unavailable and retry.
            done = gateFaults->failOver(m_o.sku, [&] {
                rec.downNs = drillNowNs();
                releaseBuyers();
            });
        } else if (auto flushed = gateFaults->flushScripts(); !flushed) {
            done = std::unexpected(flushed.error());
        }
        rec.ok = done.has_value();
        rec.detail = done ? *done : done.error().message;
        if (e.kind != FaultKind::ScriptFlush && rec.ok)
            m_report.faults[e.kind].note = rec.detail;
        rec.doneNs = drillNowNs();
        if (rec.startNs == 0)
            rec.startNs = rec.downNs > 0 ? rec.downNs : rec.doneNs;
        releaseBuyers();
        if (rec.ok) {
            m_lastFaultNs = rec.startNs;
            m_shared.addRecord(rec);
        }
        else
            m_report.notes << u"%1 before buyer %2 could not be injected: %3"_s.arg(faultName(e.kind))
                                  .arg(e.beforeBuyer)
                                  .arg(rec.detail);
    }
}

bool Rehearsal::recovered() const
{
    if (!m_probe || m_lastFaultNs == 0 || !m_probe->problem().isEmpty())
        return true;
    return m_probe->outageAfter(m_lastFaultNs).has_value() || drillNowNs() - m_lastFaultNs > kRecoveryWaitNs;
}

qint64 Rehearsal::steadyNsOf(qint64 wallMs)
{
    return drillNowNs() - (QDateTime::currentMSecsSinceEpoch() - wallMs) * 1'000'000;
}

void Rehearsal::healFormation()
{
    if (!m_o.via || !m_o.via->healFormation || m_lastFaultNs == 0)
        return;
    progress(u"heal"_s);
    auto healed = m_o.via->healFormation();
    if (!healed)
        m_report.notes << u"the formation was not made whole after the sale: %1"_s.arg(healed.error().message);
    else
        m_report.notes << u"the formation made whole after the sale: %1"_s.arg(*healed);
}

Result<void> Rehearsal::expireAll()
{
    progress(u"expire"_s);
    QElapsedTimer waiting;
    waiting.start();
    for (;;) {
        if (auto ex = m_control->expire(); !ex)
            m_report.notes << u"expiry failed once: %1"_s.arg(ex.error().message);
        qint64 locked = 0;
        for (const QString &sku : {m_o.sku, m_probeSku}) {
            if (sku.isEmpty())
                continue;
            auto levels = m_control->book().levels(sku);
            if (!levels)
                return std::unexpected(levels.error());
            locked += levels->locked;
        }
        if (locked == 0)
            break;
        if (waiting.elapsed() > m_o.holdSeconds * 1000 + kExpireSlackMs) {
            m_report.notes << u"%1 units still locked %2 s after the sale (holds of %3 s)"_s.arg(locked)
                                  .arg(waiting.elapsed() / 1000)
                                  .arg(m_o.holdSeconds);
            break;
        }
        QThread::msleep(100);
    }
    drainWarnings();
    return {};
}

void Rehearsal::deliverLatePayments()
{
    progress(u"late-payments"_s);
    // Through the server with --via (a payment provider's callback), else the engine.
    std::unique_ptr<DrillChannel> via;
    if (m_o.via) {
        auto made = m_o.via->channels();
        if (!made) {
            m_report.notes << u"the late payments could not reach the server: %1"_s.arg(made.error().message);
            return;
        }
        via = std::move(*made);
    }
    for (const FaultRecord &r : m_shared.records) {
        if (r.kind != FaultKind::LatePayment)
            continue;
        const QString payment = u"late-%1"_s.arg(r.buyer);
        Result<Outcome> c = fail(ErrorCode::Internal, u"not sent"_s);
        if (via) {
            auto a = via->confirm(r.order, payment);
            c = a ? Result<Outcome>(a->ofOnlyDelivery()) : Result<Outcome>(std::unexpected(a.error()));
        } else if (auto change = m_control->confirm(r.order, payment); change) {
            c = change->outcome;
        } else {
            c = std::unexpected(change.error());
        }
        if (!c) {
            m_shared.paymentOutcomes[u"error_"_s + errorCodeName(c.error().code)]++;
            continue;
        }
        m_shared.paymentOutcomes[outcomeWord(*c)]++;
        m_lateAnswers.insert(r.order, *c);
        if (*c == Outcome::Paid)
            m_shared.paidUnits += 1;
    }
}

void Rehearsal::reconcile()
{
    progress(u"reconcile"_s);
    auto quiet = reconcileToQuiescence(*m_control, int(m_o.reconcileMaxPasses));
    if (!quiet)
        m_report.notes << u"the reconciler failed: %1"_s.arg(quiet.error().message);
    else
        m_report.reconcile = *quiet;
    if (quiet && !quiet->quiet)
        m_report.notes << u"the reconciler still found something new after %1 passes"_s.arg(quiet->passes);
    drainWarnings();
}

Result<void> Rehearsal::check()
{
    progress(u"check"_s);
    auto levels = m_control->book().levels(m_o.sku);
    if (!levels)
        return std::unexpected(levels.error());
    auto check = m_control->book().check();
    if (!check)
        return std::unexpected(check.error());
    DrillReport &r = m_report;
    // Its own SKUs: another SKU's history never fails a rehearsal.
    r.check = check->ofSku(m_o.sku);
    if (!m_probeSku.isEmpty()) {
        const BookCheck probe = check->ofSku(m_probeSku);
        r.check.buckets << probe.buckets;
        r.check.lines << probe.lines;
        r.check.strayRows << probe.strayRows;
        r.check.payments << probe.payments;
    }
    r.sold = levels->sold;
    r.bookAvailable = levels->available;
    r.bookLocked = levels->locked;
    r.bookTotal = levels->total;
    if (m_control->gate()) {
        const GateAgreement agreement = checkGateAgreesWithBook(*m_control, m_o.sku);
        r.gateAvailable = agreement.gateAvailable;
        r.i5 = agreement.holds;
        r.i5Detail = agreement.detail;
        auto tokens = m_control->gate()->openTokens(m_o.sku);
        if (tokens) {
            for (const GateToken &t : *tokens) {
                m_openTokens.insert(t.token);
                m_openOrders.insert(t.order);
            }
        } else {
            r.notes << u"open tokens unreadable: %1"_s.arg(tokens.error().message);
        }
    }
    for (const FaultRecord &f : m_shared.records)
        if (f.kind == FaultKind::DuplicateCallback)
            m_shared.paidUnits += m_shared.paidAnswers(f.order);
    r.reserveOutcomes = m_shared.reserveOutcomes;
    r.paymentOutcomes = m_shared.paymentOutcomes;
    r.reservedUnits = m_shared.reservedUnits.load();
    r.paidUnits = m_shared.paidUnits.load();
    r.gateWarnings += m_shared.gateWarnings.load();
    r.oversold = std::max<qint64>(0, std::max(r.sold, r.paidUnits) - m_o.stock);
    r.stuck = levels->locked
        + (m_control->gate() && r.gateAvailable >= 0 ? std::max<qint64>(0, levels->available - r.gateAvailable) : 0);
    r.throughputPerS = r.saleSeconds > 0 ? double(m_shared.answered.load()) / r.saleSeconds : 0;
    r.unitsPerS = r.saleSeconds > 0 ? double(r.reservedUnits) / r.saleSeconds : 0;
    r.p50Ms = percentileMs(m_shared.latenciesUs, 0.50);
    r.p99Ms = percentileMs(m_shared.latenciesUs, 0.99);
    for (const QString &e : std::as_const(m_shared.errors))
        r.notes << u"unexpected: %1"_s.arg(e);
    if (!m_probeSku.isEmpty())
        if (auto probe = probeChecks(); !probe)
            return probe;
    if (m_o.via) {
        // Every reservation the server answered `reserved` is in the book (kill -9 included),
        // the probe's too.
        std::vector<Acknowledged> reserved = m_shared.reservedOrders;
        if (m_probe)
            for (const DrillProbe::Answer &a : m_probe->answers())
                if (a.reserved)
                    reserved.push_back({a.order, a.answeredNs});
        QStringList lost;
        for (const Acknowledged &a : reserved) {
            auto status = m_control->book().orderStatus(a.order);
            if (!status)
                return std::unexpected(status.error());
            if (!*status || **status == OrderStatus::Abandoned) {
                ++r.lostReservations;
                m_lostAtNs.push_back(a.atNs);
                if (lost.size() < kMaxUnhealedListed)
                    lost << a.order;
            }
        }
        if (!lost.isEmpty())
            r.notes << u"answered reserved by the server but not in the book: %1"_s.arg(lost.join(u", "_s));
        // Every payment the server answered `paid` is a PAID order in the book.
        QStringList unpaid;
        for (const Acknowledged &a : m_shared.paidOrders) {
            auto status = m_control->book().orderStatus(a.order);
            if (!status)
                return std::unexpected(status.error());
            if (*status != OrderStatus::Paid) {
                ++r.lostPayments;
                m_lostAtNs.push_back(a.atNs);
                if (unpaid.size() < kMaxUnhealedListed)
                    unpaid << a.order;
            }
        }
        if (!unpaid.isEmpty())
            r.notes << u"answered paid by the server but not paid in the book: %1"_s.arg(unpaid.join(u", "_s));
    }
    return {};
}

Result<void> Rehearsal::probeChecks()
{
    DrillReport &r = m_report;
    auto levels = m_control->book().levels(m_probeSku);
    if (!levels)
        return std::unexpected(levels.error());
    r.stuck += levels->locked;
    if (m_control->gate()) {
        const GateAgreement agreement = checkGateAgreesWithBook(*m_control, m_probeSku);
        if (!agreement.holds) {
            r.i5 = false;
            r.i5Detail += (r.i5Detail.isEmpty() ? QString() : u"; "_s) + agreement.detail;
        }
        if (agreement.gateAvailable >= 0)
            r.stuck += std::max<qint64>(0, levels->available - agreement.gateAvailable);
    }
    return {};
}

std::vector<std::optional<FaultCost>> Rehearsal::costs() const
{
    // The gate-wide faults in the order they took effect: each owns the time until the next.
    std::vector<qint64> starts;
    for (const FaultRecord &r : m_shared.records)
        if (isGlobalFault(r.kind))
            starts.push_back(r.startNs);
    std::sort(starts.begin(), starts.end());
    std::vector<std::optional<FaultCost>> out;
    for (const FaultRecord &r : m_shared.records) {
        if (!isGlobalFault(r.kind)) {
            out.emplace_back();
            continue;
        }
        const auto next = std::upper_bound(starts.begin(), starts.end(), r.startNs);
        const qint64 until = next == starts.end() ? std::numeric_limits<qint64>::max() : *next;
        FaultCost c;
        if (m_probe)
            c.outageSeconds = m_probe->outageAfter(r.startNs);
        for (size_t i = 0; i < m_replication.size(); ++i) {
            const auto &[at, state] = m_replication[i];
            if (at < r.startNs || at >= until || state != BookReplication::State::WritingAlone)
                continue;
            const qint64 end = i + 1 < m_replication.size() ? m_replication[i + 1].first : at + kReplicationEveryMs * 1'000'000;
            c.aloneSeconds += double(std::min(end, until) - at) / 1e9;
        }
        c.acknowledgedLost = std::count_if(m_lostAtNs.cbegin(), m_lostAtNs.cend(),
                                           [&](qint64 at) { return at >= r.startNs && at < until; });
        out.push_back(c);
    }
    return out;
}

bool Rehearsal::healed(const FaultRecord &r, const FaultCost &cost)
{
    Book &book = m_control->book();
    auto statusOf = [&](const QString &order) -> std::optional<OrderStatus> {
        auto s = book.orderStatus(order);
        return s ? *s : std::nullopt;
    };
    switch (r.kind) {
    case FaultKind::CrashAfterGate: {
        const auto s = statusOf(r.order);
        return !m_openTokens.contains(r.token) && (!s || *s == OrderStatus::Abandoned);
    }
    case FaultKind::LostCallback: return statusOf(r.order) == OrderStatus::Closed;
    case FaultKind::DuplicateCallback: {
        auto rows = book.ledgerOfOrder(r.order);
        auto refunds = book.refundCount(r.order);
        const qint64 confirms = rows ? std::count_if(rows->cbegin(), rows->cend(), [](const LedgerRow &l) {
            return l.operation == u"CONFIRM"_s;
        }) : -1;
        return statusOf(r.order) == OrderStatus::Paid && confirms == 1 && refunds && *refunds == 0
            && m_shared.paidAnswers(r.order) == 1;
    }
    case FaultKind::LatePayment: {
        auto refunds = book.refundCount(r.order);
        return m_lateAnswers.value(r.order, Outcome::Paid) == Outcome::RefundRequired && refunds && *refunds == 1
            && statusOf(r.order) == OrderStatus::Closed;
    }
    case FaultKind::DbError: {
        // Given back by the engine at once, or (if that give-back itself failed, e.g. a Redis
        // restart at the same moment) by the reconciler, which fences the order.
        const auto s = statusOf(r.order);
        return (!s || *s == OrderStatus::Abandoned) && !m_openOrders.contains(r.order);
    }
    case FaultKind::RedisRestart: return m_shared.lastGateAnswerSentNs.load() > r.doneNs && m_report.i5;
    case FaultKind::NodeFailover:
        // A buyer sent after the master was stopped was answered: the stopped master answers
        // nothing, and it runs again only once its replica took over the slot. (The buyers
        // go on while it is stopped, so they may all be answered before failOver returns.)
        return m_shared.lastGateAnswerSentNs.load() > r.downNs && m_report.i5;
    case FaultKind::ScriptFlush: return m_shared.lastGateAnswerSentNs.load() > r.doneNs;
    case FaultKind::ServerKill:
        // A buyer sent after the old process was gone was answered by the new one (or, on a
        // formation, by another).
        return m_shared.lastGateAnswerSentNs.load() > r.downNs && m_report.lostReservations == 0 && m_report.i5;
    case FaultKind::BookFailover:
        // The writes came back (a standby took over) and no answer given was lost.
        return cost.outageSeconds.has_value() && cost.acknowledgedLost == 0 && m_report.i5;
    case FaultKind::StandbyLoss:
        // The same, and no commit was acknowledged with one copy meanwhile.
        return cost.outageSeconds.has_value() && cost.acknowledgedLost == 0 && cost.aloneSeconds == 0 && m_report.i5;
    }
    return false;
}

void Rehearsal::judgeFaults()
{
    const std::vector<std::optional<FaultCost>> cost = costs();
    for (size_t i = 0; i < m_shared.records.size(); ++i) {
        const FaultRecord &r = m_shared.records[i];
        FaultTally &t = m_report.faults[r.kind];
        ++t.injected;
        if (const std::optional<FaultCost> &c = cost[i]) {
            if (m_probe) {
                t.probed = true;
                if (c->outageSeconds)
                    t.outageSeconds = std::max(t.outageSeconds.value_or(0), *c->outageSeconds);
                else
                    t.outageEnded = false;
            }
            t.aloneSeconds += c->aloneSeconds;
            t.acknowledgedLost += c->acknowledgedLost;
        }
        if (healed(r, cost[i].value_or(FaultCost{})))
            ++t.healed;
        else
            markUnhealed(t, r.order.isEmpty() ? u"event before buyer %1"_s.arg(r.buyer) : r.order);
    }
}

} // namespace

Result<void> checkDrillTarget(Engine &engine)
{
    const QString instead = u"a drill injects faults into the book and gate it runs on: run it on a scratch book and "
                            u"gate (the console's default), or stop the sale first"_s;
    auto sales = engine.sales().list();
    if (!sales)
        return std::unexpected(sales.error());
    for (const Sale &s : std::as_const(*sales)) {
        if (s.status == SaleStatus::Open || s.status == SaleStatus::Paused)
            return fail(ErrorCode::InvalidArgument,
                        u"db: refused: sale %1 of %2 is %3 in the book %4; %5"_s.arg(s.id).arg(
                            s.sku, saleStatusName(s.status), engine.database().url().display(), instead),
                        u"db"_s);
    }
    if (Gate *gate = engine.gate()) {
        auto open = gate->openSaleSkus();
        if (!open)
            return std::unexpected(open.error());
        if (!open->isEmpty())
            return fail(ErrorCode::InvalidArgument,
                        u"redis: refused: the gate %1 has an open sale of %2; %3"_s.arg(
                            gate->url().toDisplayString(), open->join(u", "_s), instead),
                        u"redis"_s);
    }
    return {};
}

GateAgreement checkGateAgreesWithBook(Engine &engine, const QString &sku)
{
    GateAgreement out;
    auto levels = engine.book().levels(sku);
    const GateSide side = engine.gateLevels(sku);
    out.gateAvailable = side.available;
    if (!levels) {
        out.holds = false;
        out.detail = u"I5: the book's levels of %1 are unreadable: %2"_s.arg(sku, levels.error().message);
    } else if (!side.reachable) {
        out.holds = false;
        out.detail = u"I5: the gate is unreachable after the drill: %1"_s.arg(side.error);
    } else if (side.available != levels->available) {
        out.holds = false;
        out.detail = u"I5: gate available %1, book available %2 for %3 after quiescence"_s.arg(side.available)
                         .arg(levels->available)
                         .arg(sku);
    }
    return out;
}

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
    return Rehearsal(m_options, m_schedule).run();
}

} // namespace flashstock
