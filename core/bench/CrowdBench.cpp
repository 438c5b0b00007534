#include "bench/CrowdBench.h"

#include "Engine.h"
#include "bench/BenchClients.h"
#include "store/Database.h"

#include <QThread>

#include <atomic>
#include <chrono>
#include <latch>
#include <thread>
#include <vector>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The server's own count of finished transactions in this database (PostgreSQL), or -1.
qint64 serverTransactions(Database &db)
{
    if (db.dialect() != Dialect::Postgres)
        return -1;
    auto rows = db.exec(u"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"_s);
    return rows && !rows->isEmpty() ? rows->first().at(0).toLongLong() : -1;
}

} // namespace

Result<CrowdResult> runCrowd(const DbUrl &db, const std::optional<RedisUrl> &redis, const QString &sku, int buyers,
                             qint64 units, int clients)
{
    EngineOptions options = benchEngineOptions(db);
    auto setup = Engine::open(options);
    if (!setup)
        return std::unexpected(setup.error());
    if (auto r = (*setup)->addSku(sku, units); !r)
        return std::unexpected(r.error());
    CrowdResult out;
    out.backend = db.dialect == Dialect::Sqlite ? u"sqlite"_s : u"postgresql"_s;
    out.path = redis ? u"gate_book"_s : u"guarded_row"_s;
    out.buyers = buyers;
    out.units = units;
    out.clients = clients;
    options.redis = redis;

    std::atomic<int> next{0};
    std::atomic<qint64> sold{0}, errors{0};
    std::latch ready(clients + 1);
    std::vector<std::thread> pool;
    QString openError;
    std::atomic<bool> openFailed{false};
    // Clients connect (and the gate loads the SKU) before the clock starts.
    if (redis) {
        EngineOptions gated = options;
        auto loader = Engine::open(gated);
        if (!loader)
            return std::unexpected(loader.error());
        if (auto loaded = (*loader)->rebuildGate(sku); !loaded)
            return std::unexpected(loaded.error());
    }
    const qint64 before = serverTransactions((*setup)->database());
    std::chrono::steady_clock::time_point start;
    for (int t = 0; t < clients; ++t)
        pool.emplace_back([&] {
            auto engine = Engine::open(options);
            if (!engine)
                openFailed = true;
            ready.arrive_and_wait();
            if (!engine)
                return;
            for (int i = next++; i < buyers; i = next++) {
                auto r = (*engine)->reserve(u"%1-%2"_s.arg(sku).arg(i), u"buyer-%1"_s.arg(i), {OrderLine{sku, 1, {}}});
                if (!r)
                    ++errors;
                else if (r->outcome == Outcome::Reserved)
                    ++sold;
            }
        });
    start = std::chrono::steady_clock::now();
    ready.arrive_and_wait();
    for (auto &t : pool)
        t.join();
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (openFailed)
        return fail(ErrorCode::Unavailable, u"crowd %1: a client could not open the engine"_s.arg(out.path));
    out.sold = sold;
    out.errors = errors;
    // The clients' connections are closed; their statistics reach the server's view shortly.
    if (before >= 0) {
        QThread::msleep(700);
        const qint64 after = serverTransactions((*setup)->database());
        out.bookTransactions = after >= 0 ? after - before - 1 : -1; // less our own first read
    }
    auto levels = (*setup)->book().levels(sku);
    if (!levels)
        return std::unexpected(levels.error());
    out.oversold = std::max<qint64>({0, levels->sold + levels->locked - units, out.sold - units});
    return out;
}

} // namespace flashstock
