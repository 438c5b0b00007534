#pragma once

#include "Domain.h"
#include "Result.h"

#include <QString>

namespace flashstock {

class Database;
enum class Dialect;

/// The part of the ledger a check reads: its rows after id `after`. `after` 0 is the whole
/// ledger (Book::check). Any other value is the reconciler's watermark (LedgerWatermark),
/// up to which the checkpoints hold the ledger replayed, so that a pass reads only what
/// changed since. A plain value; any thread.
struct LedgerWindow {
    qint64 after = 0; ///< ledger id; rows with a higher id are in the window

    /// The whole ledger, no checkpoint.
    static LedgerWindow whole() { return {}; }
    bool isWhole() const { return after == 0; }

    /// Internal to core/store: `ledger WHERE id > after`, the window as a FROM clause that
    /// a statement may continue with `AND ...`. The bound is a literal so the planner sees
    /// it (a prepared parameter or subquery made PostgreSQL plan for a third of the table);
    /// SQLite: NOT INDEXED keeps it on the rowid range (a secondary index would otherwise be
    /// scanned whole to save a sort). This keeps a pass at the cost of what changed.
    QString sql(Dialect dialect) const;
};

/// The reconciler's ledger watermark and per-bucket checkpoints (tables reconcile_state and
/// reconcile_checkpoints): the ledger replayed up to the watermark, so each pass reads only
/// the rows after it. Thread affinity: that of its Database.
class LedgerWatermark {
public:
    explicit LedgerWatermark(Database &db);

    /// The window of the next pass: the rows after the watermark (the whole ledger before the
    /// first pass moved it).
    [[nodiscard]] Result<LedgerWindow> window();
    /// Moves the watermark to the last ledger row older than `lagMs` (database clock, so rows
    /// of slower transactions with lower ids are not skipped) and no later than `upTo` (the
    /// last row the pass checked, BookCheck::checkedThrough), folding the rows passed into
    /// the checkpoints. One transaction; concurrent calls (several reconcilers) run one after
    /// the other, each from the watermark the last one left. Returns the new watermark.
    [[nodiscard]] Result<qint64> advance(qint64 lagMs, qint64 upTo);
    /// What the ledger explains for one bucket now: its checkpoint plus the rows after the
    /// watermark, read inside the caller's transaction if there is one.
    [[nodiscard]] Result<Levels3> replay(const QString &sku, int bucket);

private:
    Database &m_db;
};

} // namespace flashstock
