#include "EngineWorkers.h"

#include "EngineThread.h"
#include "ServerMetrics.h"

#include "store/BookWriters.h"

using namespace Qt::StringLiterals;

namespace flashstock::server {

EngineWorkers::EngineWorkers(ResolvedProfile profile, int workers, BookWriters &book, ServerMetrics &metrics)
    : m_profile(std::move(profile))
    , m_count(workers)
    , m_book(book)
    , m_metrics(metrics)
{
}

EngineWorkers::~EngineWorkers()
{
    stop();
}

Result<void> EngineWorkers::start()
{
    for (int i = 0; i < m_count; ++i) {
        auto thread = std::make_unique<EngineThread>(u"engine worker %1"_s.arg(i + 1), m_profile,
                                                     [this](Engine &engine) { runWorker(engine); });
        if (auto r = thread->start(); !r) {
            stop();
            return r;
        }
        m_threads.push_back(std::move(thread));
    }
    return {};
}

void EngineWorkers::submit(Job job)
{
    {
        std::lock_guard lock(m_mutex);
        m_jobs.push_back(std::move(job));
        m_metrics.setBookQueue(qint64(m_jobs.size()));
    }
    m_wake.notify_one();
}

void EngineWorkers::stop()
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

bool EngineWorkers::take(Job &out)
{
    std::unique_lock lock(m_mutex);
    m_wake.wait(lock, [&] { return !m_jobs.empty() || m_stopping; });
    if (m_jobs.empty())
        return false;
    out = std::move(m_jobs.front());
    m_jobs.pop_front();
    m_metrics.setBookQueue(qint64(m_jobs.size()));
    return true;
}

void EngineWorkers::runWorker(Engine &engine)
{
    engine.useBookWriters(&m_book);
    Job job;
    while (take(job)) {
        job(engine);
        logEngineWarnings(engine, u"engine worker"_s);
    }
    engine.useBookWriters(nullptr);
}

} // namespace flashstock::server
