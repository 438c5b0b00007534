#include "store/BookWriters.h"

#include "store/Database.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

const QString kConfirmLane = u"confirm"_s;
const QString kReleaseLane = u"release"_s;

Error stoppedError()
{
    return {ErrorCode::Unavailable, u"the book writers are not running"_s, {}};
}

} // namespace

BookWriters::BookWriters(DbUrl db, Actor actor, int writers)
    : m_url(std::move(db))
    , m_actor(std::move(actor))
    , m_count(std::clamp(writers, 1, 64))
{
}

BookWriters::~BookWriters()
{
    stop();
}

Result<void> BookWriters::start()
{
    if (m_started)
        return m_loop.stopping() ? Result<void>(std::unexpected(stoppedError())) : Result<void>();
    m_started = true;
    std::vector<std::future<Result<void>>> opened;
    for (int i = 0; i < m_count; ++i) {
        std::promise<Result<void>> p;
        opened.push_back(p.get_future());
        m_loop.spawn([this, i, p = std::move(p)]() mutable { runWriter(i, std::move(p)); });
    }
    if (m_url.dialect == Dialect::Sqlite) {
        m_checkpointerStopping = false;
        m_checkpointDue = false;
        m_walFrames = 0;
        m_commitsSinceAsked = 0;
        std::promise<Result<void>> p;
        opened.push_back(p.get_future());
        m_checkpointer = std::thread(&BookWriters::runCheckpointer, this, std::move(p));
    }
    Result<void> first;
    for (auto &f : opened) {
        Result<void> r = f.get();
        if (!r && first)
            first = r;
    }
    if (!first)
        stop();
    return first;
}

void BookWriters::stop()
{
    m_loop.stop();
    if (m_checkpointer.joinable()) {
        {
            std::lock_guard lock(m_checkpointMutex);
            m_checkpointerStopping = true;
        }
        m_checkpointChanged.notify_all();
        m_checkpointer.join();
    }
}

bool BookWriters::Lanes::push(Job &&job)
{
    Lane &l = lanes[job.lane];
    l.exclusive = job.exclusive;
    l.jobs.push_back(std::move(job));
    // Only a lane that just became ready needs a writer woken: one being written goes
    // on with its writer (finished()), one already ready has had its wake.
    const bool nowReady = l.jobs.size() == 1 && !(l.exclusive && l.writing);
    if (nowReady)
        readyLanes.push_back(l.jobs.back().lane);
    return nowReady;
}

void BookWriters::submit(const QString &lane, bool exclusive, Job job)
{
    job.lane = lane;
    job.exclusive = exclusive;
    if (m_loop.post(job))
        return;
    if (job.reserveDone)
        job.reserveDone(std::unexpected(stoppedError()));
    if (job.changeDone)
        job.changeDone(std::unexpected(stoppedError()));
}

void BookWriters::reserve(ReserveOrder order, ReserveDone done)
{
    // Its first line in lock order: the row its transaction locks first.
    QString first;
    for (const OrderLine &l : std::as_const(order.lines))
        if (first.isEmpty() || l.sku < first)
            first = l.sku;
    Job job;
    job.kind = Kind::Reserve;
    job.reserve = std::move(order);
    job.reserveDone = std::move(done);
    submit(u"sku:"_s + first, true, std::move(job));
}

void BookWriters::confirm(FinishOrder order, ChangeDone done)
{
    Job job;
    job.kind = Kind::Confirm;
    job.finish = std::move(order);
    job.changeDone = std::move(done);
    submit(kConfirmLane, false, std::move(job));
}

void BookWriters::release(FinishOrder order, ChangeDone done)
{
    Job job;
    job.kind = Kind::Release;
    job.finish = std::move(order);
    job.changeDone = std::move(done);
    submit(kReleaseLane, false, std::move(job));
}

namespace {

template <typename T, typename Submit>
Result<T> submitAndWait(Submit submit)
{
    std::promise<Result<T>> p;
    auto f = p.get_future();
    submit([&p](Result<T> r) { p.set_value(std::move(r)); });
    return f.get();
}

} // namespace

Result<ReserveResult> BookWriters::reserveAndWait(ReserveOrder order)
{
    return submitAndWait<ReserveResult>([&](ReserveDone done) { reserve(std::move(order), std::move(done)); });
}

Result<OrderChange> BookWriters::confirmAndWait(FinishOrder order)
{
    return submitAndWait<OrderChange>([&](ChangeDone done) { confirm(std::move(order), std::move(done)); });
}

Result<OrderChange> BookWriters::releaseAndWait(FinishOrder order)
{
    return submitAndWait<OrderChange>([&](ChangeDone done) { release(std::move(order), std::move(done)); });
}

BookWriters::Stats BookWriters::stats() const
{
    Stats s = m_loop.update([this](const Lanes &queue) {
        Stats out = m_stats;
        for (const Lane &lane : queue.lanes)
            out.queued += qint64(lane.jobs.size());
        return out;
    });
    std::lock_guard lock(m_checkpointMutex);
    s.checkpoints = m_checkpoints;
    return s;
}

bool BookWriters::Lanes::drained() const
{
    return std::all_of(lanes.cbegin(), lanes.cend(), [](const Lane &l) { return l.jobs.empty(); });
}

void BookWriters::Lanes::take(Batch &out, int)
{
    // What fill() leaves ready (the rest of a shared lane, other lanes) goes to another free
    // writer (WorkerLoop::take).
    const QString lane = readyLanes.front();
    readyLanes.pop_front();
    fill(lane, out);
}

void BookWriters::Lanes::fill(const QString &laneName, Batch &out)
{
    out.lane = laneName;
    out.jobs.clear();
    Lane &lane = lanes[laneName];
    out.kind = lane.jobs.front().kind;
    while (!lane.jobs.empty() && int(out.jobs.size()) < kMaxBatch) {
        out.jobs.push_back(std::move(lane.jobs.front()));
        lane.jobs.pop_front();
    }
    if (lane.exclusive)
        lane.writing = true;
    else if (!lane.jobs.empty())
        readyLanes.push_back(laneName); // others may take the rest at once
}

bool BookWriters::finished(Batch &batch)
{
    bool again = false;
    bool gone = false;
    m_loop.update([&](Lanes &q, int idle) {
        ++m_stats.batches;
        m_stats.orders += qint64(batch.jobs.size());
        m_stats.largest = std::max(m_stats.largest, int(batch.jobs.size()));
        auto it = q.lanes.find(batch.lane);
        if (it == q.lanes.end()) {
            gone = true;
            return;
        }
        it->writing = false;
        if (it->jobs.empty()) {
            q.lanes.erase(it);
        } else if (it->exclusive) {
            // The orders that came while this batch ran go next, on this writer, unless
            // other lanes wait with no free writer for them: no hand-over to another thread
            // (SQLite: this connection's page cache is the fresh one).
            if (q.readyLanes.size() <= size_t(idle)) {
                q.fill(batch.lane, batch);
                again = true;
            } else {
                q.readyLanes.push_back(batch.lane);
            }
        }
    });
    if (!again && !gone)
        m_loop.wakeAll();
    return again;
}

void BookWriters::answer(Book &book, Batch &batch)
{
    if (batch.kind == Kind::Reserve) {
        QList<ReserveOrder> orders;
        orders.reserve(qsizetype(batch.jobs.size()));
        for (const Job &j : batch.jobs)
            orders << j.reserve;
        const QList<Result<ReserveResult>> answers = book.reserveBatch(orders);
        for (size_t i = 0; i < batch.jobs.size(); ++i)
            batch.jobs[i].reserveDone(answers.at(qsizetype(i)));
        return;
    }
    QList<FinishOrder> orders;
    orders.reserve(qsizetype(batch.jobs.size()));
    for (const Job &j : batch.jobs)
        orders << j.finish;
    const QList<Result<OrderChange>> answers =
        batch.kind == Kind::Confirm ? book.confirmBatch(orders) : book.releaseBatch(orders);
    for (size_t i = 0; i < batch.jobs.size(); ++i)
        batch.jobs[i].changeDone(answers.at(qsizetype(i)));
}

void BookWriters::runWriter(int index, std::promise<Result<void>> opened)
{
    Q_UNUSED(index);
    auto db = Database::open(m_url);
    if (!db) {
        opened.set_value(std::unexpected(db.error()));
        return;
    }
    if (auto r = (*db)->leaveCheckpointsToOthers(); !r) {
        opened.set_value(std::unexpected(r.error()));
        return;
    }
    (*db)->setWriteFaults(m_faults);
    Book book(**db, m_actor);
    opened.set_value({});
    Batch batch;
    while (m_loop.take(batch)) {
        do {
            answer(book, batch);
            committed(**db);
            if (m_batchObserver)
                m_batchObserver(batch.kind == Kind::Reserve ? u"reserve"_s
                                : batch.kind == Kind::Confirm ? u"confirm"_s : u"release"_s,
                                int(batch.jobs.size()));
        } while (finished(batch));
    }
}

void BookWriters::committed(Database &db)
{
    if (m_url.dialect != Dialect::Sqlite)
        return;
    std::unique_lock lock(m_checkpointMutex);
    if (m_walFrames < kWalFramesBeforeCatchUp) {
        if (m_checkpointDue)
            return; // the checkpointer has not started on the last one: it takes this one too
        if (++m_commitsSinceAsked < kCommitsPerCheckpoint)
            return;
        m_commitsSinceAsked = 0;
        m_checkpointDue = true;
        lock.unlock();
        m_checkpointChanged.notify_all();
        return;
    }
    // Past the bound: after the checkpoint under way, this writer checkpoints the rest with
    // nobody committing, so the WAL starts afresh at its next transaction.
    m_checkpointChanged.wait(lock, [&] { return !m_checkpointRunning; });
    if (m_walFrames < kWalFramesBeforeCatchUp)
        return; // that one caught up
    m_checkpointRunning = true;
    lock.unlock();
    auto done = db.checkpointWal();
    lock.lock();
    m_checkpointRunning = false;
    if (done)
        m_walFrames = done->complete() ? 0 : done->frames;
    lock.unlock();
    m_checkpointChanged.notify_all();
}

void BookWriters::runCheckpointer(std::promise<Result<void>> opened)
{
    auto db = Database::open(m_url);
    if (!db) {
        opened.set_value(std::unexpected(db.error()));
        return;
    }
    opened.set_value({});
    std::unique_lock lock(m_checkpointMutex);
    for (;;) {
        m_checkpointChanged.wait(lock, [&] {
            return (m_checkpointDue && !m_checkpointRunning) || (m_checkpointerStopping && !m_checkpointRunning);
        });
        m_checkpointDue = false;
        m_checkpointRunning = true;
        const bool stopping = m_checkpointerStopping;
        lock.unlock();
        // A checkpoint that fails loses nothing: its frames stay in the WAL for the next one
        // (or for the next connection that checkpoints), and no order waits on it.
        auto done = (*db)->checkpointWal();
        lock.lock();
        m_checkpointRunning = false;
        ++m_checkpoints;
        if (done)
            m_walFrames = done->frames; // it starts afresh only at a write that finds it all checkpointed
        m_checkpointChanged.notify_all();
        if (stopping)
            return;
    }
}

} // namespace flashstock
