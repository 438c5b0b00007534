#include "drill/DrillShared.h"

#include "Engine.h"
#include "gate/Gate.h"
#include "store/Database.h"
#include "store/NaiveReserve.h"

#include <QThread>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// How long a buyer keeps retrying a reserve the gate could not answer (a restart).
constexpr int kGateRetries = 120;
constexpr int kGateRetrySleepMs = 25;

QString errorWord(const Error &e)
{
    return u"error_"_s + errorCodeName(e.code);
}

/// The in-process channel: the worker's own engine (its book work through the drill's book
/// writers).
class EngineChannel final : public DrillChannel {
public:
    explicit EngineChannel(Engine &engine) : m_engine(engine) {}
    Result<Outcome> reserve(const QString &order, const QString &user, const QString &sku, qint64 qty,
                            qint64 holdSeconds) override
    {
        auto r = m_engine.reserve(order, user, {OrderLine{sku, qty, {}}}, holdSeconds);
        if (!r)
            return std::unexpected(r.error());
        return r->outcome;
    }
    Result<PaymentAnswer> confirm(const QString &order, const QString &payment) override
    {
        auto c = m_engine.confirm(order, payment);
        if (!c)
            return std::unexpected(c.error());
        return PaymentAnswer{c->outcome, false};
    }
    qsizetype takeWarnings() override { return m_engine.takeWarnings().size(); }

private:
    Engine &m_engine;
};

class Worker {
public:
    /// `engine`: the worker's own (in process; null with --via). `channel`: where its buyers
    /// and payments go.
    Worker(DrillShared &shared, Engine *engine, DrillChannel &channel)
        : m_s(shared)
        , m_engine(engine)
        , m_channel(channel)
        , m_sku(shared.options.sku)
    {
        if (m_engine) {
            m_engine->database().setWriteFaults(&m_s.dbErrors);
            m_engine->useBookWriters(m_s.writers);
        }
    }
    ~Worker()
    {
        if (m_engine) {
            m_engine->database().setWriteFaults(nullptr);
            m_engine->useBookWriters(nullptr);
        }
    }

    void run();

private:
    void serveBuyer(qint64 i);
    void crashAfterGate(qint64 i, const QString &order, const QString &user);
    void pay(const QString &order, const QString &payment, bool countForDuplicate);
    void drainWarnings() { m_s.gateWarnings += m_channel.takeWarnings(); }

    DrillShared &m_s;
    Engine *m_engine;
    DrillChannel &m_channel;
    const QString m_sku;
    std::vector<qint64> m_latencies;
};

void Worker::run()
{
    for (;;) {
        std::optional<PendingPayment> copy;
        {
            std::lock_guard lock(m_s.mutex);
            if (!m_s.payments.empty()) {
                copy = m_s.payments.front();
                m_s.payments.pop_front();
            }
        }
        if (copy) {
            pay(copy->order, copy->payment, true);
            continue;
        }
        ++m_s.active; // before taking a buyer, so "no buyer left and none active" is final
        const qint64 i = m_s.next.fetch_add(1);
        if (i < m_s.options.buyers && !m_s.stop.load()) {
            while (i >= m_s.holdFrom.load() && !m_s.stop.load()) // a gate-wide event is due before this buyer
                QThread::msleep(1);
            if (!m_s.stop.load()) {
                serveBuyer(i);
                --m_s.active;
                continue;
            }
        }
        --m_s.active;
        m_s.next.fetch_sub(1); // keep `next` at most buyers for the progress line
        bool finished = false;
        {
            std::lock_guard lock(m_s.mutex);
            finished = m_s.payments.empty() && m_s.active.load() == 0;
        }
        if (finished)
            break;
        QThread::msleep(1); // others still serve buyers who may hand out payment copies
    }
    drainWarnings();
    std::lock_guard lock(m_s.mutex);
    m_s.latenciesUs.insert(m_s.latenciesUs.end(), m_latencies.begin(), m_latencies.end());
}

void Worker::crashAfterGate(qint64 i, const QString &order, const QString &user)
{
    Gate *gate = m_engine->gate();
    for (int attempt = 0; attempt < kGateRetries; ++attempt) {
        auto g = gate->reserve(m_sku, order, user, 1);
        if (!g && g.error().code == ErrorCode::Unavailable) {
            QThread::msleep(kGateRetrySleepMs);
            continue;
        }
        ++m_s.answered;
        if (!g) {
            m_s.count(&DrillShared::reserveOutcomes, errorWord(g.error()));
            return;
        }
        if (g->code != GateCode::Reserved) {
            // Refused before the crash point: the buyer got the gate's answer.
            const Outcome answer = g->code == GateCode::LimitExceeded ? Outcome::LimitExceeded
                : g->code == GateCode::SaleClosed                     ? Outcome::SaleClosed
                : g->code == GateCode::Paused                         ? Outcome::Paused
                : g->code == GateCode::Existing                       ? Outcome::Reserved
                                                                      : Outcome::OutOfStock;
            m_s.count(&DrillShared::reserveOutcomes, outcomeWord(answer));
            return;
        }
        // The worker "dies" here: the units are pre-deducted, the book never hears of them.
        m_s.count(&DrillShared::reserveOutcomes, u"crashed_after_gate"_s);
        m_s.addRecord({FaultKind::CrashAfterGate, i, order, g->token, 0, true, {}});
        return;
    }
    ++m_s.answered;
    m_s.count(&DrillShared::reserveOutcomes, outcomeWord(Outcome::GateUnavailable));
}

void Worker::serveBuyer(qint64 i)
{
    const BuyerPlan &plan = m_s.schedule.buyers[size_t(i)];
    const QString order = drillOrderId(m_sku, i);
    const QString user = u"u%1"_s.arg(i);
    if (plan.fault == FaultKind::CrashAfterGate && m_engine && m_engine->gate()) {
        crashAfterGate(i, order, user);
        return;
    }
    const bool dbError = plan.fault == FaultKind::DbError;
    if (dbError)
        m_s.dbErrors.arm(order);
    Result<Outcome> r = fail(ErrorCode::Internal, u"not sent"_s);
    // With --via the server is what answers: every answer that is not Unavailable counts.
    const bool gate = m_engine ? m_engine->gate() != nullptr : true;
    for (int attempt = 0; attempt < kGateRetries; ++attempt) {
        const qint64 sent = drillNowNs();
        r = m_channel.reserve(order, user, m_sku, 1, m_s.options.holdSeconds);
        m_latencies.push_back((drillNowNs() - sent) / 1000);
        if (r && *r == Outcome::GateUnavailable) {
            QThread::msleep(kGateRetrySleepMs);
            continue;
        }
        if (gate && (r || r.error().code != ErrorCode::Unavailable)) {
            qint64 seen = m_s.lastGateAnswerSentNs.load();
            while (sent > seen && !m_s.lastGateAnswerSentNs.compare_exchange_weak(seen, sent)) {
            }
        }
        break;
    }
    if (dbError && !m_s.dbErrors.disarm(order)) {
        // The injected failure fired inside the book's transaction.
        m_s.addRecord({FaultKind::DbError, i, order, {}, 0, true, {}});
    }
    ++m_s.answered;
    if (!r) {
        m_s.count(&DrillShared::reserveOutcomes, errorWord(r.error()));
        if (!(dbError && r.error().code == ErrorCode::Unavailable))
            m_s.noteError(u"reserve %1: %2"_s.arg(order, r.error().message));
        drainWarnings();
        return;
    }
    m_s.count(&DrillShared::reserveOutcomes, outcomeWord(*r));
    if (*r != Outcome::Reserved) {
        drainWarnings();
        return;
    }
    ++m_s.reservedUnits;
    if (m_s.options.via) {
        std::lock_guard lock(m_s.mutex);
        m_s.reservedOrders.push_back(order);
    }
    const QString payment = u"pay-%1"_s.arg(i);
    switch (plan.fault.value_or(FaultKind::ScriptFlush)) {
    case FaultKind::LostCallback:
        m_s.addRecord({FaultKind::LostCallback, i, order, {}, 0, true, {}});
        break;
    case FaultKind::LatePayment:
        m_s.addRecord({FaultKind::LatePayment, i, order, {}, 0, true, {}});
        break;
    case FaultKind::DuplicateCallback: {
        m_s.addRecord({FaultKind::DuplicateCallback, i, order, {}, 0, true, {}});
        {
            std::lock_guard lock(m_s.mutex);
            for (int c = 1; c < plan.copies; ++c)
                m_s.payments.push_back({order, payment});
        }
        pay(order, payment, true);
        break;
    }
    default:
        if (plan.pays)
            pay(order, payment, false);
        break;
    }
    drainWarnings();
}

void Worker::pay(const QString &order, const QString &payment, bool countForDuplicate)
{
    auto c = m_channel.confirm(order, payment);
    if (!c) {
        m_s.count(&DrillShared::paymentOutcomes, errorWord(c.error()));
        m_s.noteError(u"confirm %1: %2"_s.arg(order, c.error().message));
        return;
    }
    if (countForDuplicate && c->resent && c->outcome == Outcome::Duplicate) {
        // One of a duplicate callback's copies, sent again after its answer was lost: it
        // paid the order or another copy did; DrillShared::paidAnswers resolves it once
        // every copy is answered.
        m_s.count(&DrillShared::paymentOutcomes, u"duplicate_resent"_s);
        m_s.count(&DrillShared::lostAnswersByOrder, order);
        drainWarnings();
        return;
    }
    const Outcome outcome = c->ofOnlyDelivery();
    m_s.count(&DrillShared::paymentOutcomes, outcomeWord(outcome));
    if (outcome == Outcome::Paid) {
        if (m_s.options.via) {
            std::lock_guard lock(m_s.mutex);
            m_s.paidOrders.push_back(order);
        }
        if (countForDuplicate)
            m_s.count(&DrillShared::paidAnswersByOrder, order); // counted in paidUnits by paidAnswers()
        else
            m_s.paidUnits += 1; // every buyer wants 1 unit
    }
    drainWarnings();
}

} // namespace

void DrillDbErrors::arm(const QString &order)
{
    std::lock_guard lock(m_mutex);
    m_armed.insert(order);
}

bool DrillDbErrors::disarm(const QString &order)
{
    std::lock_guard lock(m_mutex);
    return m_armed.remove(order);
}

void DrillShared::addRecord(FaultRecord r)
{
    ++injected;
    std::lock_guard lock(mutex);
    records.push_back(std::move(r));
}

void DrillShared::count(QMap<QString, qint64> DrillShared::*map, const QString &word)
{
    std::lock_guard lock(mutex);
    ++(this->*map)[word];
}

void DrillShared::noteError(const QString &message)
{
    std::lock_guard lock(mutex);
    if (errors.size() < 10)
        errors << message;
}

qint64 DrillShared::paidAnswers(const QString &order)
{
    std::lock_guard lock(mutex);
    const qint64 paid = paidAnswersByOrder.value(order);
    // Exactly one delivery committed the payment (the ledger's one CONFIRM says so): if none
    // was answered `paid`, that answer was lost, and it was a resent one's.
    return paid > 0 ? paid : (lostAnswersByOrder.value(order) > 0 ? 1 : 0);
}

QString drillOrderId(const QString &sku, qint64 buyer)
{
    return u"%1-b%2"_s.arg(sku).arg(buyer);
}

void runDrillWorker(DrillShared &shared)
{
    const DrillOptions &o = shared.options;
    if (o.via) {
        auto channel = o.via->channels();
        if (!channel) {
            shared.noteError(u"worker could not reach the server: %1"_s.arg(channel.error().message));
        } else {
            Worker(shared, nullptr, **channel).run();
        }
        ++shared.workersDone;
        return;
    }
    auto engine = Engine::open(EngineOptions{o.db, o.redis, Actor{o.operatorName, u"drill"_s}});
    if (!engine) {
        shared.noteError(u"worker could not open the engine: %1"_s.arg(engine.error().message));
        ++shared.workersDone;
        return;
    }
    NaiveReserve naive;
    if (o.naiveBookForTesting)
        (*engine)->book().setLineTakerForTesting(&naive);
    EngineChannel channel(**engine);
    Worker(shared, engine->get(), channel).run();
    ++shared.workersDone;
}

} // namespace flashstock
