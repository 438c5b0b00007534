#include "bench/BookBench.h"

#include "Engine.h"
#include "bench/BenchClients.h"
#include "bench/PgBench.h"
#include "store/BookSql.h"
#include "store/BookWriters.h"
#include "store/Database.h"

#include <QAtomicInteger>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <latch>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

using Clock = std::chrono::steady_clock;

/// Stock of each case's SKU: far more than any run can take.
constexpr qint64 kStock = 1'000'000'000;
/// Untimed reserves each client makes first, so statement preparation stays out of p99.
constexpr int kWarmup = 2;

QAtomicInteger<quint64> g_connectionSerial;

// --- the runner -------------------------------------------------------------------------

/// One case of the suite. Issue 7 adds buckets (a SKU of N buckets through openGuardedClient)
/// and the gate in front; the runner below stays as it is.
struct CaseDef {
    QString name;
    int buckets = 1;
    BenchClientFactory open = nullptr;
    bool gate = false; ///< needs BenchOptions::redis
    int writers = 0;   ///< book writers the clients share (group commit); 0: none
};

/// Book writers of batched_row: a hot row takes one writer at a time anyway; the others
/// serve other SKUs in a real sale.
constexpr int kBenchWriters = 4;

const QList<CaseDef> &caseDefs()
{
    static const QList<CaseDef> defs{{u"guarded_row"_s, 1, &openGuardedClient},
                                     {u"batched_row"_s, 1, &openBatchedClient, false, kBenchWriters},
                                     {u"bare_sql"_s, 1, &openBareClient},
                                     {u"naive"_s, 1, &openNaiveClient},
                                     {u"buckets4"_s, 4, &openGuardedClient},
                                     {u"buckets16"_s, 16, &openGuardedClient},
                                     {u"gate_book"_s, 1, &openGateClient, true}};
    return defs;
}

/// What one client thread counted.
struct Tally {
    qint64 reserved = 0, outOfStock = 0, errors = 0, warmReserved = 0;
    QString firstError;
    QString openError;
    std::vector<qint64> latencyNs;
    Clock::time_point end;
};

void tallyOne(Tally &tally, const Result<bool> &r, bool warm)
{
    if (r && *r)
        ++(warm ? tally.warmReserved : tally.reserved);
    else if (r)
        tally.outOfStock += warm ? 0 : 1;
    else if (!warm) {
        ++tally.errors;
        if (tally.firstError.isEmpty())
            tally.firstError = r.error().message;
    }
}

/// Nearest-rank percentile of sorted samples, in ms.
double percentileMs(const std::vector<qint64> &sorted, double p)
{
    if (sorted.empty())
        return 0;
    const auto rank = std::size_t(std::ceil(p / 100.0 * double(sorted.size())));
    return double(sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1]) / 1e6;
}

/// Raw figures of one case, merged over its rounds.
struct CaseRun {
    qint64 reserved = 0, outOfStock = 0, errors = 0;
    qint64 successes = 0; ///< warm-up included: what the clients were told they took
    QString firstError;
    std::vector<qint64> latencyNs;
    double seconds = 0;
    qint64 writerBatches = 0, writerOrders = 0;

    void merge(const Tally &t)
    {
        reserved += t.reserved;
        outOfStock += t.outOfStock;
        errors += t.errors;
        successes += t.reserved + t.warmReserved;
        if (firstError.isEmpty())
            firstError = t.firstError;
        latencyNs.insert(latencyNs.end(), t.latencyNs.begin(), t.latencyNs.end());
    }

    /// Sorts the samples and fills the figures of `r` (name, backend and clients are the caller's).
    void summarize(BenchCaseResult &r)
    {
        std::sort(latencyNs.begin(), latencyNs.end());
        r.seconds = seconds;
        r.reserved = reserved;
        r.outOfStock = outOfStock;
        r.errors = errors;
        r.firstError = firstError;
        r.opsPerSecond = seconds > 0 ? double(reserved) / seconds : 0;
        r.p50Ms = percentileMs(latencyNs, 50);
        r.p99Ms = percentileMs(latencyNs, 99);
        r.writerBatches = writerBatches;
        r.writerOrders = writerOrders;
    }
};

/// Runs `def` with `clients` threads, each with a fresh connection, for `seconds`, and adds
/// what they did to `run`. Errors: a client that could not open.
Result<void> runClients(const CaseDef &def, const BenchClientSpec &base, int clients, double seconds, CaseRun &run)
{
    std::optional<BookWriters> writers;
    BenchClientSpec shared = base;
    if (def.writers > 0) {
        writers.emplace(base.url, Actor{kBenchActor, kBenchActor}, def.writers);
        if (auto r = writers->start(); !r)
            return fail(r.error().code, u"%1: the book writers did not start: %2"_s.arg(def.name, r.error().message));
        shared.writers = &*writers;
    }
    std::vector<Tally> tallies(static_cast<std::size_t>(clients));
    std::latch ready(clients);
    std::latch go(1);
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    pool.reserve(std::size_t(clients));
    for (int t = 0; t < clients; ++t) {
        pool.emplace_back([&, t] {
            Tally &tally = tallies[std::size_t(t)];
            BenchClientSpec spec = shared;
            spec.orderPrefix = base.orderPrefix + u"t%1-"_s.arg(t);
            spec.user = u"%1-t%2"_s.arg(kBenchActor).arg(t);
            auto client = def.open(spec);
            if (client) {
                for (int w = 0; w < kWarmup; ++w)
                    tallyOne(tally, (*client)->reserveOnce(w), true);
            } else {
                tally.openError = client.error().message;
            }
            ready.count_down();
            go.wait();
            if (!client)
                return;
            tally.latencyNs.reserve(1 << 14);
            for (qint64 seq = kWarmup; !stop.load(std::memory_order_relaxed); ++seq) {
                const auto t0 = Clock::now();
                const Result<bool> r = (*client)->reserveOnce(seq);
                const auto t1 = Clock::now();
                tally.latencyNs.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
                tallyOne(tally, r, false);
            }
            tally.end = Clock::now();
        });
    }
    ready.wait();
    const BookWriters::Stats warm = writers ? writers->stats() : BookWriters::Stats{};
    QString openError;
    for (const Tally &t : tallies) {
        if (!t.openError.isEmpty() && openError.isEmpty())
            openError = t.openError;
    }
    const Clock::time_point start = Clock::now();
    if (!openError.isEmpty())
        stop = true;
    go.count_down();
    if (openError.isEmpty())
        std::this_thread::sleep_until(start + std::chrono::duration<double>(seconds));
    stop = true;
    for (std::thread &th : pool)
        th.join();
    if (writers) {
        const BookWriters::Stats timed = writers->stats();
        run.writerBatches += timed.batches - warm.batches;
        run.writerOrders += timed.orders - warm.orders;
    }
    if (!openError.isEmpty())
        return fail(ErrorCode::Internal, u"%1: a client could not start: %2"_s.arg(def.name, openError));

    Clock::time_point end = start;
    for (const Tally &t : tallies) {
        run.merge(t);
        end = std::max(end, t.end);
    }
    run.seconds += std::chrono::duration<double>(end - start).count();
    return {};
}

// --- scratch databases ------------------------------------------------------------------

/// Runs one statement in autocommit on its own short-lived connection. Empty on success.
QString adminExec(const DbUrl &url, const QString &statement)
{
    const QString name = u"flashstock-bench-admin-%1"_s.arg(g_connectionSerial.fetchAndAddRelaxed(1));
    QString error;
    {
        QSqlDatabase db = addPostgresConnection(url, name, u"flashstock-bench"_s);
        if (!db.open()) {
            error = u"cannot connect to %1: %2"_s.arg(url.display(), db.lastError().text().trimmed());
        } else {
            QSqlQuery q(db);
            if (!q.exec(statement))
                error = q.lastError().text().trimmed();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return error;
}

/// A PostgreSQL database that exists for one run: created on construction through the
/// given role, dropped (other sessions forced off) by the destructor.
class ScratchPostgres {
public:
    explicit ScratchPostgres(DbUrl admin)
        : m_admin(std::move(admin))
    {
        QString suffix;
        for (int i = 0; i < 12; ++i)
            suffix += QChar(u"0123456789abcdefghijklmnopqrstuvwxyz"[QRandomGenerator::system()->bounded(36)]);
        const QString name = u"flashstock_bench_"_s + suffix;
        if (const QString e = adminExec(m_admin, sql::createDatabase(name)); !e.isEmpty()) {
            m_error = u"cannot create the scratch database %1 on %2 (the role needs CREATEDB): %3"_s.arg(
                name, m_admin.display(), e);
            return;
        }
        m_name = name;
    }
    ~ScratchPostgres()
    {
        // A destructor cannot report; a database left behind is an empty flashstock_bench_*
        // scratch copy, never the operator's book.
        if (!m_name.isEmpty())
            (void)adminExec(m_admin, sql::dropDatabase(m_name));
    }
    ScratchPostgres(const ScratchPostgres &) = delete;
    ScratchPostgres &operator=(const ScratchPostgres &) = delete;

    QString error() const { return m_error; }
    DbUrl url() const { return m_admin.withDatabase(m_name); }

private:
    DbUrl m_admin;
    QString m_name;
    QString m_error;
};

QJsonValue jsonRatio(const std::optional<double> &r)
{
    return r ? QJsonValue(std::round(*r * 1000.0) / 1000.0) : QJsonValue();
}

double rounded(double v, double scale) { return std::round(v * scale) / scale; }

} // namespace

// --- report -----------------------------------------------------------------------------

const BenchCaseResult *BenchReport::find(const QString &name, const QString &backend, int clientCount) const
{
    for (const BenchCaseResult &c : cases) {
        if (c.name == name && c.backend == backend && c.clients == clientCount)
            return &c;
    }
    return nullptr;
}

QList<std::optional<double>> BenchReport::ratios(const QString &numerator, const QString &denominator,
                                                 const QString &backend) const
{
    QList<std::optional<double>> out;
    for (int n : clients) {
        const BenchCaseResult *a = find(numerator, backend, n);
        const BenchCaseResult *b = find(denominator, backend, n);
        if (a && b && b->opsPerSecond > 0)
            out << a->opsPerSecond / b->opsPerSecond;
        else
            out << std::nullopt;
    }
    return out;
}

QStringList BenchReport::notes() const
{
    QStringList lines;
    for (const BenchBackendStatus &b : backends) {
        if (!b.ran)
            lines << b.note;
    }
    if (!pgbenchNote.isEmpty())
        lines << u"pgbench: not run: "_s + pgbenchNote;
    return lines;
}

QJsonObject BenchReport::toJson() const
{
    QJsonArray caseArray;
    for (const BenchCaseResult &c : cases) {
        caseArray.append(QJsonObject{{u"name"_s, c.name},
                                     {u"backend"_s, c.backend},
                                     {u"clients"_s, c.clients},
                                     {u"ops_per_s"_s, rounded(c.opsPerSecond, 10)},
                                     {u"p50_ms"_s, rounded(c.p50Ms, 1000)},
                                     {u"p99_ms"_s, rounded(c.p99Ms, 1000)},
                                     {u"oversold"_s, c.oversold},
                                     {u"reserved"_s, c.reserved},
                                     {u"out_of_stock"_s, c.outOfStock},
                                     {u"errors"_s, c.errors},
                                     {u"first_error"_s, c.firstError.isEmpty() ? QJsonValue() : QJsonValue(c.firstError)},
                                     {u"unaccounted"_s, c.unaccounted},
                                     {u"writer_batches"_s, c.writerBatches},
                                     {u"mean_batch"_s, c.writerBatches > 0 ? QJsonValue(rounded(double(c.writerOrders) / double(c.writerBatches), 10)) : QJsonValue()},
                                     {u"seconds"_s, rounded(c.seconds, 1000)}});
    }
    QJsonObject guardedVsBare, batchedVsGuarded, batchedVsPgbench, buckets16VsRow, crowdTime, crowdTxn;
    QJsonArray crowdArray;
    for (const CrowdResult &c : crowd) {
        crowdArray.append(QJsonObject{{u"backend"_s, c.backend}, {u"path"_s, c.path}, {u"buyers"_s, c.buyers},
                                      {u"units"_s, c.units}, {u"clients"_s, c.clients},
                                      {u"seconds"_s, rounded(c.seconds, 1000)}, {u"sold"_s, c.sold},
                                      {u"oversold"_s, c.oversold}, {u"errors"_s, c.errors},
                                      {u"book_transactions"_s, c.bookTransactions < 0 ? QJsonValue()
                                                                                      : QJsonValue(c.bookTransactions)}});
    }
    for (const CrowdResult &row : crowd) {
        if (row.path != u"guarded_row"_s)
            continue;
        for (const CrowdResult &gate : crowd) {
            if (gate.path != u"gate_book"_s || gate.backend != row.backend)
                continue;
            crowdTime.insert(row.backend, gate.seconds > 0 ? QJsonValue(rounded(row.seconds / gate.seconds, 100))
                                                           : QJsonValue());
            crowdTxn.insert(row.backend, gate.bookTransactions >= 0 && gate.sold > 0
                                             ? QJsonValue(rounded(double(gate.bookTransactions) / double(gate.sold), 100))
                                             : QJsonValue());
        }
    }
    QJsonArray backendArray;
    for (const BenchBackendStatus &b : backends) {
        backendArray.append(QJsonObject{{u"backend"_s, b.backend},
                                        {u"status"_s, b.ran ? u"ran"_s : u"skipped"_s},
                                        {u"where"_s, b.where},
                                        {u"durability"_s, b.durability},
                                        {u"note"_s, b.note}});
        if (!b.ran)
            continue;
        QJsonArray values, batched, overPgbench;
        for (const auto &r : ratios(u"guarded_row"_s, u"bare_sql"_s, b.backend))
            values.append(jsonRatio(r));
        guardedVsBare.insert(b.backend, values);
        for (const auto &r : ratios(u"batched_row"_s, u"guarded_row"_s, b.backend))
            batched.append(jsonRatio(r));
        batchedVsGuarded.insert(b.backend, batched);
        if (b.backend == u"postgresql"_s) {
            for (const auto &r : ratios(u"batched_row"_s, u"pgbench"_s, b.backend))
                overPgbench.append(jsonRatio(r));
            batchedVsPgbench.insert(b.backend, overPgbench);
        }
        // 16 buckets against one row at the highest client count (32 by default).
        const int most = clients.isEmpty() ? 0 : *std::max_element(clients.cbegin(), clients.cend());
        const BenchCaseResult *spread = find(u"buckets16"_s, b.backend, most);
        const BenchCaseResult *row = find(u"guarded_row"_s, b.backend, most);
        buckets16VsRow.insert(b.backend, spread && row && row->opsPerSecond > 0
                                             ? QJsonValue(rounded(spread->opsPerSecond / row->opsPerSecond, 100))
                                             : QJsonValue());
    }
    QJsonArray clientArray;
    for (int n : clients)
        clientArray.append(n);
    return QJsonObject{{u"suite"_s, u"book"_s},
                       {u"seconds_per_case"_s, secondsPerCase},
                       {u"rounds"_s, rounds},
                       {u"clients"_s, clientArray},
                       {u"machine"_s, QJsonObject{{u"cpus"_s, cpus}, {u"load_at_start"_s, loadAtStart}}},
                       {u"cases"_s, caseArray},
                       {u"ratios"_s, QJsonObject{{u"guarded_vs_bare"_s, guardedVsBare},
                                                 {u"batched_vs_guarded"_s, batchedVsGuarded},
                                                 {u"batched_vs_pgbench"_s, batchedVsPgbench},
                                                 {u"buckets16_vs_row_32"_s, buckets16VsRow},
                                                 {u"crowd_time_row_vs_gate"_s, crowdTime},
                                                 {u"crowd_book_txn_per_unit"_s, crowdTxn}}},
                       {u"crowd"_s, crowdArray},
                       {u"backends"_s, backendArray},
                       {u"notes"_s, QJsonArray::fromStringList(notes())}};
}

// --- the suite --------------------------------------------------------------------------

QStringList BookBench::caseNames()
{
    QStringList names;
    for (const CaseDef &d : caseDefs())
        names << d.name;
    return names;
}

BookBench::BookBench(BenchOptions options)
    : m_options(std::move(options))
{
}

void BookBench::say(const QString &line) const
{
    if (m_options.progress)
        m_options.progress(line);
}

Result<BenchReport> BookBench::run()
{
    if (m_options.clients.isEmpty())
        return fail(ErrorCode::InvalidArgument, u"clients: give at least one client count"_s, u"clients"_s);
    for (int n : m_options.clients) {
        if (n < 1 || n > 256)
            return fail(ErrorCode::InvalidArgument, u"clients must be from 1 to 256, got %1"_s.arg(n), u"clients"_s);
    }
    if (!(m_options.secondsPerCase >= 0.05 && m_options.secondsPerCase <= 600))
        return fail(ErrorCode::InvalidArgument,
                    u"seconds must be from 0.05 to 600, got %1"_s.arg(m_options.secondsPerCase), u"seconds"_s);
    for (const QString &name : m_options.cases) {
        if (!caseNames().contains(name))
            return fail(ErrorCode::InvalidArgument,
                        u"case %1 is unknown (cases: %2)"_s.arg(name, caseNames().join(u", "_s)), u"case"_s);
    }
    for (const QString &name : m_options.crowdPaths) {
        if (name != u"guarded_row"_s && name != u"gate_book"_s)
            return fail(ErrorCode::InvalidArgument,
                        u"crowd path %1 is unknown (paths: guarded_row, gate_book)"_s.arg(name), u"crowd-paths"_s);
    }
    for (const QString &name : m_options.backends) {
        if (name != u"sqlite"_s && name != u"postgresql"_s)
            return fail(ErrorCode::InvalidArgument,
                        u"backend %1 is unknown (backends: sqlite, postgresql)"_s.arg(name), u"backends"_s);
    }
    const auto runs = [this](const QString &backend) {
        return m_options.backends.isEmpty() || m_options.backends.contains(backend);
    };

    m_runTag = QString::number(QDateTime::currentMSecsSinceEpoch(), 36);
    BenchReport report;
    report.clients = m_options.clients;
    report.secondsPerCase = m_options.secondsPerCase;
    report.rounds = std::max(1, m_options.rounds);
    // Figures from a busy machine mislead; say how busy it was.
    report.cpus = QThread::idealThreadCount();
    if (QFile loadavg(u"/proc/loadavg"_s); loadavg.open(QIODevice::ReadOnly))
        report.loadAtStart = QString::fromLatin1(loadavg.readAll()).section(u' ', 0, 2);

    // PostgreSQL first in setup, so a bad server fails in a second, not after the SQLite run.
    std::unique_ptr<ScratchPostgres> pg;
    if (m_options.postgres && runs(u"postgresql"_s)) {
        say(u"postgresql: creating a scratch database on %1"_s.arg(m_options.postgres->display()));
        pg = std::make_unique<ScratchPostgres>(*m_options.postgres);
        if (!pg->error().isEmpty())
            return fail(ErrorCode::Unavailable, pg->error(), u"bench-pg"_s);
    }

    const QString base = m_options.scratchDir.isEmpty() ? QDir::tempPath() : m_options.scratchDir;
    QTemporaryDir dir(base + u"/flashstock-bench-XXXXXX"_s);
    if (!dir.isValid())
        return fail(ErrorCode::Unavailable, u"cannot create a scratch directory in %1: %2"_s.arg(base, dir.errorString()));
    DbUrl sqlite;
    sqlite.dialect = Dialect::Sqlite;
    sqlite.path = dir.filePath(u"bench.db"_s);
    if (!runs(u"sqlite"_s)) {
        report.backends << BenchBackendStatus{u"sqlite"_s, false, {}, {}, u"sqlite: skipped (--backends)"_s};
        say(report.backends.constLast().note);
    } else if (auto r = runBackend(sqlite, u"sqlite"_s, report); !r) {
        return std::unexpected(r.error());
    }

    if (pg) {
        const Result<void> r = runBackend(pg->url(), u"postgresql"_s, report);
        say(u"postgresql: dropping the scratch database"_s);
        pg.reset();
        if (!r)
            return std::unexpected(r.error());
    } else {
        report.backends << BenchBackendStatus{u"postgresql"_s, false, {}, {},
                                              runs(u"postgresql"_s) ? u"postgresql: skipped, pass --bench-pg URL"_s
                                                                    : u"postgresql: skipped (--backends)"_s};
        say(report.backends.constLast().note);
    }

    // For people and JSON alike: by backend, then case (suite order), then clients.
    const QStringList order = caseNames();
    std::stable_sort(report.cases.begin(), report.cases.end(), [&](const BenchCaseResult &a, const BenchCaseResult &b) {
        if (a.backend != b.backend)
            return a.backend == u"sqlite"_s;
        return order.indexOf(a.name) < order.indexOf(b.name);
    });
    return report;
}

QString BookBench::benchSku(const QString &rest) const
{
    return u"bench.%1.%2"_s.arg(m_runTag, rest);
}

Result<void> BookBench::runPgBenchCase(Engine &engine, const DbUrl &url, const QString &backend, int clients,
                                       BenchReport &report)
{
    // PostgreSQL's own tool with the single-order transaction, on the same server and in the
    // same run: the baseline batched_row is measured against.
    const QString sku = benchSku(u"%1.pgbench.c%2"_s.arg(backend).arg(clients));
    if (auto r = engine.addSku(sku, kStock, 1); !r)
        return std::unexpected(r.error());
    const int seconds = std::max(1, int(std::lround(m_options.secondsPerCase)));
    auto pgb = runPgBench(url, sku, clients, seconds, engine.database().nowMsExpr());
    if (!pgb) {
        say(u"%1 pgbench %2 clients: not run: %3"_s.arg(backend).arg(clients).arg(pgb.error().message));
        report.pgbenchNote = pgb.error().message;
        return {};
    }
    BenchCaseResult r;
    r.name = u"pgbench"_s;
    r.backend = backend;
    r.clients = clients;
    r.seconds = pgb->seconds;
    r.opsPerSecond = pgb->tps;
    r.p50Ms = pgb->latencyMs; // pgbench reports the average, not the median
    say(u"%1 pgbench %2 clients (BEGIN; guarded UPDATE; ledger INSERT; COMMIT): %3 transactions/s, average %4 ms"_s
            .arg(backend).arg(clients).arg(r.opsPerSecond, 0, 'f', 0).arg(pgb->latencyMs, 0, 'f', 3));
    report.cases << r;
    return {};
}

Result<void> BookBench::runBackend(const DbUrl &url, const QString &backend, BenchReport &report)
{
    // The setup connection creates each case's SKU and reads its levels afterwards.
    auto setup = Engine::open(benchEngineOptions(url));
    if (!setup)
        return std::unexpected(setup.error());
    Engine &engine = **setup;
    BenchBackendStatus status{backend, true,
                              url.dialect == Dialect::Sqlite ? u"scratch file"_s : url.display(), {}, {}};
    if (auto d = engine.database().exec(sql::durabilitySettings(url.dialect)); d && !d->isEmpty())
        status.durability = d->first().at(0).toString();
    report.backends << status;
    say(u"%1: %2 (%3), %4 s per case in %5 rounds"_s.arg(backend, status.where, status.durability)
            .arg(m_options.secondsPerCase).arg(std::max(1, m_options.rounds)));

    // The cases of one client count take turns, round by round, so a burst of background
    // load (a build on this machine) hits them alike and their ratios stay meaningful.
    const int rounds = std::max(1, m_options.rounds);
    for (int clients : m_options.clients) {
        struct Live {
            const CaseDef *def;
            BenchClientSpec spec;
            SkuLevels before;
            CaseRun run;
        };
        std::vector<Live> live;
        for (const CaseDef &def : caseDefs()) {
            if (!m_options.cases.isEmpty() && !m_options.cases.contains(def.name))
                continue;
            if (def.gate && !m_options.redis)
                continue;
            BenchClientSpec spec;
            spec.url = url;
            if (def.gate)
                spec.redis = m_options.redis;
            // The backend in the SKU: the gate's keys (one redis-server for the whole run)
            // must not meet the other backend's orders.
            spec.sku = benchSku(u"%1.%2.c%3"_s.arg(backend, def.name).arg(clients));
            spec.orderPrefix = u"%1-c%2-"_s.arg(def.name).arg(clients);
            spec.now = engine.database().nowMsExpr();
            if (auto r = engine.addSku(spec.sku, kStock, def.buckets); !r)
                return std::unexpected(r.error());
            auto before = engine.book().levels(spec.sku);
            if (!before)
                return std::unexpected(before.error());
            live.push_back(Live{&def, spec, *before, {}});
        }
        for (int round = 0; round < rounds; ++round) {
            for (Live &l : live) {
                BenchClientSpec spec = l.spec;
                spec.orderPrefix += u"r%1-"_s.arg(round);
                if (auto r = runClients(*l.def, spec, clients, m_options.secondsPerCase / rounds, l.run); !r)
                    return fail(r.error().code, u"%1: %2"_s.arg(backend, r.error().message));
            }
        }
        for (Live &l : live) {
            auto after = engine.book().levels(l.spec.sku);
            if (!after)
                return std::unexpected(after.error());
            BenchCaseResult r;
            r.name = l.def->name;
            r.backend = backend;
            r.clients = clients;
            l.run.summarize(r);
            const qint64 taken = l.before.available - after->available;
            r.oversold = std::max<qint64>(0, l.run.successes - taken);
            r.unaccounted = std::max<qint64>(0, taken - l.run.successes);
            QString line = u"%1 %2 %3 clients: %4 reserves/s, p50 %5 ms, p99 %6 ms, oversold %7"_s.arg(
                backend, r.name).arg(clients).arg(r.opsPerSecond, 0, 'f', 0).arg(r.p50Ms, 0, 'f', 3)
                .arg(r.p99Ms, 0, 'f', 3).arg(r.oversold);
            if (r.writerBatches > 0)
                line += u", %1 book transactions (%2 orders each on average)"_s.arg(r.writerBatches).arg(
                    double(r.writerOrders) / double(r.writerBatches), 0, 'f', 1);
            if (r.errors > 0)
                line += u", %1 errors (first: %2)"_s.arg(r.errors).arg(r.firstError);
            say(line);
            report.cases << r;
        }
        if (url.dialect == Dialect::Postgres && (m_options.cases.isEmpty() || m_options.cases.contains(u"batched_row"_s)))
            if (auto r = runPgBenchCase(engine, url, backend, clients, report); !r)
                return r;
    }
    if (m_options.crowdBuyers > 0) {
        // The crowd: every buyer through the book alone, then through the gate in front.
        const auto wanted = [this](const QString &path) {
            return m_options.crowdPaths.isEmpty() || m_options.crowdPaths.contains(path);
        };
        QList<std::optional<RedisUrl>> paths;
        if (wanted(u"guarded_row"_s))
            paths << std::nullopt;
        if (m_options.redis && wanted(u"gate_book"_s))
            paths << m_options.redis;
        for (const auto &gate : paths) {
            const QString sku = benchSku(u"%1.crowd.%2"_s.arg(backend, gate ? u"gate"_s : u"row"_s));
            auto crowd = runCrowd(url, gate, sku, m_options.crowdBuyers, m_options.crowdUnits, m_options.crowdClients);
            if (!crowd)
                return fail(crowd.error().code, u"%1: %2"_s.arg(backend, crowd.error().message));
            say(u"%1 crowd %2: %3 buyers for %4 units answered in %5 s, %6 sold, oversold %7, book transactions %8"_s
                    .arg(backend, crowd->path).arg(crowd->buyers).arg(crowd->units).arg(crowd->seconds, 0, 'f', 2)
                    .arg(crowd->sold).arg(crowd->oversold)
                    .arg(crowd->bookTransactions < 0 ? u"n/a"_s : QString::number(crowd->bookTransactions)));
            report.crowd << *crowd;
        }
    }
    return {};
}

} // namespace flashstock
