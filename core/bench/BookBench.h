#pragma once

#include "Result.h"
#include "bench/CrowdBench.h"
#include "gate/RedisUrl.h"
#include "store/DbUrl.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace flashstock {

class Engine;

/// What one run of the book benchmark measures, and where.
struct BenchOptions {
    QList<int> clients{1, 8, 32};  ///< concurrent clients per case: threads, one connection each
    double secondsPerCase = 3.0;   ///< wall time of each (case, backend, clients) run, in seconds
    /// The cases of one client count take turns in this many rounds of secondsPerCase/rounds
    /// each (fresh connections each round), so background load hits them alike.
    int rounds = 3;
    /// A PostgreSQL server, reached through any database its role may connect to: a scratch
    /// database `flashstock_bench_<random>` is created there (the role needs CREATEDB), used,
    /// and dropped at the end, also on failure. Empty: the PostgreSQL cases are skipped.
    std::optional<DbUrl> postgres;
    QString scratchDir;            ///< where the SQLite scratch directory goes (empty: system temp)
    QStringList cases;             ///< case names to run, in BookBench::caseNames() (empty: all)
    /// The gate for gate_book and the crowd's gate path (the benchmark's own redis-server);
    /// without it those are skipped with a note.
    std::optional<RedisUrl> redis;
    int crowdBuyers = 0;           ///< buyers of the crowd (0: no crowd)
    qint64 crowdUnits = 1000;      ///< units the crowd races for
    int crowdClients = 32;         ///< concurrent client threads of the crowd
    /// The crowd's paths to run: guarded_row (the book alone) and gate_book (the gate in
    /// front); empty: both (gate_book only with a gate).
    QStringList crowdPaths;
    /// The backends to run: sqlite and postgresql (the latter only with `postgres`); empty: both.
    QStringList backends;
    /// Receives one line per step, for people (stderr); called on the thread that runs run().
    std::function<void(const QString &)> progress;
};

/// The figures of one case on one backend at one client count.
struct BenchCaseResult {
    QString name;            ///< guarded_row, batched_row, bare_sql, naive, ..., pgbench (PostgreSQL's tool)
    QString backend;         ///< sqlite or postgresql
    int clients = 0;
    double seconds = 0;      ///< wall time from the start signal to the last client's last answer
    qint64 reserved = 0;     ///< timed attempts that answered reserved (1 unit each)
    qint64 outOfStock = 0;   ///< timed attempts that answered out_of_stock (0 while stock lasts)
    qint64 errors = 0;       ///< timed attempts that failed (the first message in firstError)
    QString firstError;
    double opsPerSecond = 0; ///< reserved / seconds
    double p50Ms = 0;        ///< median latency of one attempt, ms (nearest rank, all attempts)
    double p99Ms = 0;        ///< 99th percentile latency, ms
    /// Units the clients were told they reserved beyond what the SKU's row actually lost
    /// (successes - (available before - available after)): lost updates, i.e. units sold
    /// twice. 0 for a correct path; the naive read-check-write oversells under concurrency.
    qint64 oversold = 0;
    qint64 unaccounted = 0;  ///< units the row lost that no client was told it reserved (0 expected)
    /// Book writers' transactions in the timed part and the orders they answered (group
    /// commit: their ratio is the mean batch); 0 for a case without writers.
    qint64 writerBatches = 0, writerOrders = 0;
};

/// Whether a backend ran, and what people need to read its figures.
struct BenchBackendStatus {
    QString backend;   ///< sqlite or postgresql
    bool ran = false;
    QString where;     ///< the server (password hidden) or "scratch file"
    QString durability; ///< e.g. `fsync=on, synchronous_commit=on`, read from the connection
    QString note;      ///< why it was skipped (a line for people), empty if it ran
};

/// Everything one run measured. Value type; safe to copy across threads.
struct BenchReport {
    QList<int> clients;
    double secondsPerCase = 0;
    int rounds = 0;
    QList<BenchCaseResult> cases;         ///< by backend, then case, then clients
    QList<BenchBackendStatus> backends;   ///< sqlite first, then postgresql
    QList<CrowdResult> crowd;             ///< by backend: guarded_row, then gate_book
    bool gate = false;                    ///< gate_book and the crowd's gate path ran
    int cpus = 0;                         ///< logical CPUs of this machine
    QString loadAtStart;                  ///< 1/5/15-minute load average as the run began (Linux)
    QString pgbenchNote;                  ///< why pgbench did not run (empty if it ran or was not due)

    /// The result of one case, or nullptr if it did not run.
    const BenchCaseResult *find(const QString &name, const QString &backend, int clients) const;
    /// ops/s of `numerator` over ops/s of `denominator` on `backend`, one per client count
    /// (in `clients` order); std::nullopt where either case is missing or the divisor is 0.
    QList<std::optional<double>> ratios(const QString &numerator, const QString &denominator,
                                        const QString &backend) const;
    /// `{"cases": [{"name", "backend", "clients", "ops_per_s", "p50_ms", "p99_ms", "oversold",
    /// ...}], "ratios": {"guarded_vs_bare": {"sqlite": [r1, r8, r32], "postgresql": [...]}},
    /// "backends": [...], "notes": [...]}`; a ratio that cannot be computed is null, a
    /// skipped backend has no ratio entry.
    QJsonObject toJson() const;
    /// Lines for people about skipped backends (`postgresql: skipped, pass --bench-pg URL`).
    QStringList notes() const;
};

/// The book benchmark: the guarded single-row reserve (Engine::reserve of 1 unit), the same
/// statements sent bare through QSqlQuery (core/store/BookSql.h, no engine code around
/// them), and the naive read-check-write (NaiveDeduct), at each client count, on a SQLite
/// scratch file and, when a server is given, a PostgreSQL scratch database. It never opens
/// the operator's book. Each client is a thread with its own connection; each case gets its
/// own SKU with stock that cannot run out within a run.
///
/// Thread affinity: run() blocks the calling thread and starts its own client threads.
class BookBench {
public:
    /// The cases, in the order they run at each client count.
    static QStringList caseNames();

    explicit BookBench(BenchOptions options);

    /// Runs every selected case on every available backend; takes about
    /// cases x clients counts x secondsPerCase per backend, plus setup. Errors:
    /// InvalidArgument (unknown case, no or bad client counts, seconds out of 0.05..600),
    /// Unavailable (the scratch database cannot be created or reached), Internal (a client
    /// could not start). Scratch databases and files are removed before it returns.
    [[nodiscard]] Result<BenchReport> run();

private:
    Result<void> runBackend(const DbUrl &url, const QString &backend, BenchReport &report);
    /// pgbench's single-order transaction at `clients` on the same server (report.cases, name `pgbench`).
    Result<void> runPgBenchCase(Engine &engine, const DbUrl &url, const QString &backend, int clients,
                                BenchReport &report);
    void say(const QString &line) const;
    /// A SKU id of this run: `bench.RUN.rest`. The run's own tag keeps the gate's keys of an
    /// earlier run on the same redis-server (its settled tokens, its orders' ids) from
    /// meeting this run's orders, which a fresh scratch book does not know.
    QString benchSku(const QString &rest) const;

    BenchOptions m_options;
    QString m_runTag; ///< made by run(): the start time in base 36
};

} // namespace flashstock
