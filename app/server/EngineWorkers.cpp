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
    , m_loop(1, [&metrics](std::size_t jobs) { metrics.setBookQueue(qint64(jobs)); })
{
}

EngineWorkers::~EngineWorkers()
{
    stop();
}

Result<void> EngineWorkers::start()
{
    for (int i = 0; i < m_count; ++i) {
        if (auto r = startWithEngine(m_loop, m_profile, [this](Engine &engine) { runWorker(engine); }); !r) {
            stop();
            return r;
        }
    }
    return {};
}

void EngineWorkers::submit(Job job)
{
    (void)m_loop.post(job);
}

void EngineWorkers::stop()
{
    m_loop.stop();
}

void EngineWorkers::runWorker(Engine &engine)
{
    engine.useBookWriters(&m_book);
    std::deque<Job> one;
    while (m_loop.take(one)) {
        one.front()(engine);
        one.clear(); // its captures (the reply) go now, not under the loop's lock
        logEngineWarnings(engine, u"engine worker"_s);
    }
    engine.useBookWriters(nullptr);
}

} // namespace flashstock::server
