#pragma once

#include "Result.h"
#include "gate/RedisUrl.h"
#include "store/DbUrl.h"

#include <QString>

#include <optional>

namespace flashstock {

/// One crowd: `buyers` buyers (1 unit each) race for `units` units through one path.
struct CrowdResult {
    QString backend;           ///< sqlite or postgresql
    QString path;              ///< guarded_row (book alone) or gate_book (gate in front)
    int buyers = 0;
    qint64 units = 0;
    int clients = 0;           ///< concurrent client threads
    double seconds = 0;        ///< until every buyer had an answer
    qint64 sold = 0;           ///< buyers answered reserved
    qint64 oversold = 0;       ///< units the book's SKU lost beyond its stock, or answered beyond it
    qint64 errors = 0;
    /// Transactions the book's server counted for the buyers (PostgreSQL pg_stat_database
    /// xact_commit + xact_rollback, less a baseline run of the same clients with no buyers,
    /// which holds their connection setup and teardown); -1 where the backend has no server
    /// counters (SQLite).
    qint64 bookTransactions = -1;
};

/// Runs one crowd on the book at `db` (a scratch book: it creates SKU `sku`), through the
/// gate at `redis` when given (gate_book) or the book alone (guarded_row), with `clients`
/// threads each owning an Engine. Errors: the book or gate cannot be opened.
[[nodiscard]] Result<CrowdResult> runCrowd(const DbUrl &db, const std::optional<RedisUrl> &redis, const QString &sku,
                                           int buyers, qint64 units, int clients);

} // namespace flashstock
