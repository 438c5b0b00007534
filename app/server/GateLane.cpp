#include "GateLane.h"

#include "gate/Gate.h"
#include "store/BookWriters.h"
#include "EngineThread.h"
#include "HttpServer.h"
#include "ServerLog.h"
#include "ServerMetrics.h"

#include <QElapsedTimer>

using namespace Qt::StringLiterals;

namespace flashstock::server {

GateLane::GateLane(QString name, ResolvedProfile profile, BookWriters &book, ServerMetrics &metrics,
                   std::function<void(const SlotMap &)> onSlotMap)
    : m_name(std::move(name))
    , m_profile(std::move(profile))
    , m_book(book)
    , m_metrics(metrics)
    , m_onSlotMap(std::move(onSlotMap))
{
}

GateLane::~GateLane()
{
    stop();
}

Result<void> GateLane::start()
{
    m_thread = std::make_unique<EngineThread>(m_name, m_profile, [this](Engine &e) { run(e); });
    return m_thread->start();
}

void GateLane::launch()
{
    m_thread = std::make_unique<EngineThread>(m_name, m_profile, [this](Engine &e) { run(e); });
    m_thread->launch([this](Result<void> r) { opened(std::move(r)); });
}

void GateLane::opened(Result<void> result)
{
    if (result)
        return;
    std::deque<Waiting> waiting;
    {
        std::lock_guard lock(m_mutex);
        m_closed = true;
        waiting.swap(m_queue);
    }
    ServerLog::trouble(m_name + u":open"_s, u"%1: %2"_s.arg(m_name, result.error().message));
    const PendingReply::WakeBatch wakes;
    for (Waiting &w : waiting)
        w.done(std::unexpected(result.error()));
}

bool GateLane::submit(ReserveRequest &request, Done &done)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_closed)
            return false;
        m_queue.push_back(Waiting{std::move(request), std::move(done)});
    }
    m_wake.notify_one();
    return true;
}

void GateLane::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_closed = true;
    }
    m_wake.notify_all();
    if (m_thread)
        m_thread->join();
}

void GateLane::run(Engine &engine)
{
    if (Gate *gate = engine.gate(); gate && m_onSlotMap)
        gate->setSlotMapListener(m_onSlotMap);
    for (;;) {
        std::deque<Waiting> batch;
        std::deque<Booked> booked;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] {
                return !m_queue.empty() || !m_booked.empty() || (m_stopping && m_inBook == 0);
            });
            if (m_queue.empty() && m_booked.empty())
                return;
            booked.swap(m_booked);
            if (m_queue.size() <= kMaxBatch) {
                batch.swap(m_queue);
            } else {
                for (qsizetype i = 0; i < kMaxBatch; ++i) {
                    batch.push_back(std::move(m_queue.front()));
                    m_queue.pop_front();
                }
            }
        }
        // The book's answers first: their buyers have waited longest.
        if (!booked.empty())
            settle(engine, std::move(booked));
        if (!batch.empty())
            handle(engine, std::move(batch));
        logEngineWarnings(engine, m_name);
    }
}

void GateLane::handle(Engine &engine, std::deque<Waiting> batch)
{
    // Held here (reserved once: the attempts' addresses stay); only those going on to the
    // book move to the heap, shared with the book writers' callback.
    std::vector<Carried> carried;
    carried.reserve(batch.size());
    QList<ReserveAttempt *> attempts;
    attempts.reserve(qsizetype(batch.size()));
    qsizetype toGate = 0;
    for (Waiting &w : batch) {
        Carried &c = carried.emplace_back(Carried{engine.planReserve(std::move(w.request)), std::move(w.done)});
        if (!c.attempt.answer && !c.attempt.bookOnly)
            ++toGate;
        attempts << &c.attempt;
    }
    if (toGate > 0) {
        QElapsedTimer roundTrip;
        roundTrip.start();
        engine.passGate(attempts);
        m_metrics.gatePipeline(toGate, double(roundTrip.nsecsElapsed()) / 1e9);
    }
    const PendingReply::WakeBatch wakes; // one wake per request thread for these answers
    for (Carried &here : carried) {
        std::optional<ReserveOrder> order = engine.prepareBook(here.attempt);
        if (!order) {
            here.done(std::move(*here.attempt.answer));
            continue;
        }
        auto c = std::make_shared<Carried>(std::move(here));
        {
            std::lock_guard lock(m_mutex);
            ++m_inBook;
        }
        auto sent = std::make_shared<QElapsedTimer>();
        sent->start();
        m_book.reserve(std::move(*order), [this, c, sent](Result<ReserveResult> answer) {
            m_metrics.bookCall(u"reserve"_s, double(sent->nsecsElapsed()) / 1e9);
            {
                std::lock_guard lock(m_mutex);
                m_booked.push_back(Booked{c, std::move(answer)});
                --m_inBook;
            }
            m_wake.notify_one();
        });
    }
}

void GateLane::settle(Engine &engine, std::deque<Booked> booked)
{
    // Every settle of these winners goes in one pipeline; each answer after its settle.
    QList<Engine::BookedAttempt> applied;
    applied.reserve(qsizetype(booked.size()));
    for (Booked &b : booked)
        applied << Engine::BookedAttempt{&b.carried->attempt, std::move(b.answer)};
    engine.applyBooks(applied);
    const PendingReply::WakeBatch wakes; // one wake per request thread for these answers
    for (Booked &b : booked)
        b.carried->done(std::move(*b.carried->attempt.answer));
}

} // namespace flashstock::server
