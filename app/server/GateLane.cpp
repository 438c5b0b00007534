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
                   UnknownOutcomes &unknown, std::function<void(const SlotMap &)> onSlotMap)
    : m_name(std::move(name))
    , m_profile(std::move(profile))
    , m_book(book)
    , m_metrics(metrics)
    , m_unknown(unknown)
    , m_onSlotMap(std::move(onSlotMap))
{
}

GateLane::~GateLane()
{
    stop();
}

Result<void> GateLane::start()
{
    return startWithEngine(m_loop, m_profile, [this](Engine &e) { run(e); });
}

void GateLane::launch()
{
    m_loop.spawn([this] {
        runWithEngine(m_profile, [this](Result<void> r) { opened(std::move(r)); }, [this](Engine &e) { run(e); });
    });
}

void GateLane::opened(Result<void> result)
{
    if (result)
        return;
    m_loop.close();
    std::deque<Waiting> waiting = m_loop.update([](Queue &q) { return std::exchange(q.waiting, {}); });
    ServerLog::trouble(m_name + u":open"_s, u"%1: %2"_s.arg(m_name, result.error().message));
    const PendingReply::WakeBatch wakes;
    for (Waiting &w : waiting)
        w.done(std::unexpected(result.error()));
}

bool GateLane::submit(ReserveRequest &request, Done &done)
{
    Waiting w{std::move(request), std::move(done)};
    if (m_loop.post(w))
        return true;
    request = std::move(w.request);
    done = std::move(w.done);
    return false;
}

void GateLane::stop()
{
    m_loop.stop();
}

void GateLane::Queue::take(Round &out, int)
{
    out.booked.clear();
    out.waiting.clear();
    out.booked.swap(booked);
    if (waiting.size() <= size_t(kMaxBatch)) {
        out.waiting.swap(waiting);
    } else {
        for (qsizetype i = 0; i < kMaxBatch; ++i) {
            out.waiting.push_back(std::move(waiting.front()));
            waiting.pop_front();
        }
    }
}

void GateLane::run(Engine &engine)
{
    engine.recordUnknownOutcomes(&m_unknown);
    if (Gate *gate = engine.gate(); gate && m_onSlotMap)
        gate->setSlotMapListener(m_onSlotMap);
    for (;;) {
        Round round;
        if (!m_loop.take(round))
            return;
        // The book's answers first: their buyers have waited longest.
        if (!round.booked.empty())
            settle(engine, std::move(round.booked));
        if (!round.waiting.empty())
            handle(engine, std::move(round.waiting));
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
        m_loop.update([](Queue &q) { ++q.inBook; });
        auto sent = std::make_shared<QElapsedTimer>();
        sent->start();
        m_book.reserve(std::move(*order), [this, c, sent](Result<ReserveResult> answer) {
            m_metrics.bookCall(u"reserve"_s, double(sent->nsecsElapsed()) / 1e9);
            m_loop.update([&](Queue &q) {
                q.booked.push_back(Booked{c, std::move(answer)});
                --q.inBook;
            });
            m_loop.wakeOne();
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
