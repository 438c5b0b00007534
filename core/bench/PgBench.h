#pragma once

#include "Result.h"
#include "store/DbUrl.h"

#include <QString>

namespace flashstock {

/// What one pgbench run measured.
struct PgBenchResult {
    int clients = 0;
    int seconds = 0;       ///< how long it ran
    double tps = 0;        ///< transactions per second (pgbench's figure without connection time)
    double latencyMs = 0;  ///< its average latency
};

/// Runs PostgreSQL's pgbench (`pgbench`, Debian postgresql-15) for `seconds` (whole, at least 2)
/// with `clients` connections on the book at `url` (PostgreSQL), each transaction the
/// book's single-order reserve of 1 unit of bucket 0 of `sku` (sql::pgbenchSingleOrderScript):
/// the baseline of the batched book. The password goes through the environment, never
/// the command line. Blocks the calling thread. Errors: Unavailable (pgbench missing or
/// failed, with its output), InvalidArgument (not PostgreSQL).
[[nodiscard]] Result<PgBenchResult> runPgBench(const DbUrl &url, const QString &sku, int clients, int seconds,
                                               const QString &nowExpr);

} // namespace flashstock
