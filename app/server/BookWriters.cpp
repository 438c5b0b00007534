#include "BookWriters.h"

#include "EngineThread.h"
#include "ServerMetrics.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock::server {

BookWriters::BookWriters(ResolvedProfile profile, int writers, ServerMetrics &metrics)
    : m_profile(std::move(profile))
    , m_count(writers)
    , m_metrics(metrics)
{
}

BookWriters::~BookWriters()
{
    stop();
}

Result<void> BookWriters::start()
{
    for (int i = 0; i < m_count; ++i) {
        auto thread = std::make_unique<EngineThread>(u"book writer %1"_s.arg(i + 1), m_profile,
                                                     [this](Engine &engine) { runWriter(engine); });
        if (auto r = thread->start(); !r) {
            stop();
            return r;
        }
        m_threads.push_back(std::move(thread));
    }
    return {};
}

void BookWriters::submit(const QString &sku, Job job)
{
    {
        std::lock_guard lock(m_mutex);
        ++m_waiting;
        if (sku.isEmpty()) {
            m_plain.push_back(std::move(job));
        } else {
            SkuQueue &q = m_bySku[sku];
            q.jobs.push_back(std::move(job));
            if (q.jobs.size() == 1)
                (q.writing == 0 ? m_idle : m_crowded).push_back(sku);
        }
        publishQueue();
    }
    m_wake.notify_one();
}

void BookWriters::stop()
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

void BookWriters::publishQueue()
{
    m_metrics.setBookQueue(m_waiting);
}

bool BookWriters::takeJobs(Taken &out)
{
    std::unique_lock lock(m_mutex);
    m_wake.wait(lock, [&] { return m_waiting > 0 || m_stopping; });
    if (m_waiting == 0)
        return false;
    out.sku.clear();
    out.jobs.clear();
    auto takeFrom = [&](std::deque<QString> &list) {
        out.sku = list.front();
        list.pop_front();
        SkuQueue &q = m_bySku[out.sku];
        out.jobs.push_back(std::move(q.jobs.front()));
        q.jobs.pop_front();
        ++q.writing;
        if (!q.jobs.empty())
            m_crowded.push_back(out.sku); // more of it wait, with a writer on it now
    };
    const bool plainFirst = m_plainTurn && !m_plain.empty();
    if (!m_idle.empty() && !plainFirst) {
        takeFrom(m_idle);
    } else if (!m_plain.empty()) {
        out.jobs.push_back(std::move(m_plain.front()));
        m_plain.pop_front();
    } else {
        takeFrom(m_crowded);
    }
    m_plainTurn = !m_plainTurn;
    m_waiting -= qint64(out.jobs.size());
    publishQueue();
    return true;
}

void BookWriters::finished(const QString &sku)
{
    if (sku.isEmpty())
        return;
    std::lock_guard lock(m_mutex);
    auto it = m_bySku.find(sku);
    if (--it->writing > 0)
        return;
    if (it->jobs.empty()) {
        m_bySku.erase(it);
        return;
    }
    // Nobody writes it any more: its waiting jobs go back to the SKUs a writer takes first.
    if (auto c = std::find(m_crowded.begin(), m_crowded.end(), sku); c != m_crowded.end())
        m_crowded.erase(c);
    m_idle.push_back(sku);
}

void BookWriters::runWriter(Engine &engine)
{
    Taken taken;
    while (takeJobs(taken)) {
        for (Job &job : taken.jobs)
            job(engine);
        finished(taken.sku);
        logEngineWarnings(engine, u"book writer"_s);
    }
}

} // namespace flashstock::server
