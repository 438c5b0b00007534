#include "bench/CrowdBench.h"

#include "Engine.h"
#include "bench/BenchClients.h"
#include "store/BookSql.h"
#include "store/Database.h"

#include <QThread>

#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <optional>
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
    auto rows = db.exec(sql::serverTransactionCount());
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
    if (redis) {
        // The gate holds the SKU's stock before the crowd comes, as after `sale start`.
        auto loader = Engine::open(options);
        if (!loader)
            return std::unexpected(loader.error());
        if (auto loaded = (*loader)->rebuildGate(sku); !loaded)
            return std::unexpected(loaded.error());
    }

    // The server counts every transaction, also a connection's own setup and teardown
    // (PREPARE, DEALLOCATE, catalog reads). So the crowd runs twice with the same clients
    // doing the same warm-up on a second SKU: once with no buyers (the baseline) and once
    // with all of them; the difference is what the buyers caused. Each count runs from
    // before the clients connect until after they disconnect (a closing backend hands its
    // statistics over at once).
    const QString warmSku = sku + u".warmup"_s;
    if (auto r = (*setup)->addSku(warmSku, 2 * clients); !r)
        return std::unexpected(r.error());
    std::atomic<qint64> sold{0}, errors{0};
    std::mutex failureMutex;
    std::optional<Error> clientFailure; // the first client that could not start, and why
    auto clientFailed = [&](const QString &what, const Error &e) {
        std::lock_guard lock(failureMutex);
        if (!clientFailure)
            clientFailure = Error{e.code, what + e.message, e.field};
    };
    auto phase = [&](int phaseBuyers, const QString &tag) -> qint64 {
        std::atomic<int> next{0};
        std::latch connected(clients), go(1);
        const qint64 before = serverTransactions((*setup)->database());
        std::vector<std::thread> pool;
        for (int t = 0; t < clients; ++t)
            pool.emplace_back([&, t] {
                auto engine = Engine::open(options);
                if (!engine) {
                    clientFailed(u"a client could not open the engine: "_s, engine.error());
                } else if (auto warm = (*engine)->reserve(u"%1-%2%3"_s.arg(warmSku, tag).arg(t), u"warmup"_s,
                                                          {OrderLine{warmSku, 1, {}}});
                           !warm) {
                    clientFailed(u"a client's warm-up reserve failed: "_s, warm.error());
                }
                connected.count_down();
                go.wait();
                for (int i = next++; engine && i < phaseBuyers; i = next++) {
                    auto r = (*engine)->reserve(u"%1-%2"_s.arg(sku).arg(i), u"buyer-%1"_s.arg(i), {OrderLine{sku, 1, {}}});
                    if (!r)
                        ++errors;
                    else if (r->outcome == Outcome::Reserved)
                        ++sold;
                }
            });
        connected.wait();
        const auto start = std::chrono::steady_clock::now();
        go.count_down();
        for (auto &t : pool)
            t.join();
        if (phaseBuyers > 0)
            out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        QThread::msleep(300); // the closed backends' last statistics reach the shared view
        const qint64 after = serverTransactions((*setup)->database());
        return before >= 0 && after >= 0 ? after - before - 1 : -1; // less our own read of `before`
    };
    const qint64 baseline = phase(0, u"b"_s);
    const qint64 crowd = phase(buyers, u"c"_s);
    if (clientFailure)
        return fail(clientFailure->code, u"crowd %1: %2"_s.arg(out.path, clientFailure->message), clientFailure->field);
    out.sold = sold;
    out.errors = errors;
    if (baseline >= 0 && crowd >= 0)
        out.bookTransactions = crowd - baseline;
    auto levels = (*setup)->book().levels(sku);
    if (!levels)
        return std::unexpected(levels.error());
    out.oversold = std::max<qint64>({0, levels->sold + levels->locked - units, out.sold - units});
    return out;
}

} // namespace flashstock
