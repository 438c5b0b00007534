#pragma once

#include "Result.h"

#include <optional>

namespace flashstock {

class Database;

/// One reconcile pass as the book records it, whoever ran it (the CLI, its timer, a console,
/// any server): what an operator alerts on when passes stop or go wrong.
struct ReconcilePassRecord {
    qint64 finishedAtMs = 0;  ///< when it ended, ms since the epoch (database clock)
    qint64 durationMs = 0;    ///< how long it ran, ms
    qint64 autoFixed = 0;     ///< discrepancies it healed by itself
    qint64 pendingApproval = 0; ///< discrepancies it found that wait for a person
    qint64 warnings = 0;      ///< trouble that did not stop it (e.g. the gate unreachable)
};

/// The last reconcile pass in the book (rows `last_pass_*` of table reconcile_state).
/// Thread affinity: that of its Database.
class ReconcilePassStore {
public:
    explicit ReconcilePassStore(Database &db);

    /// Records a pass that ended now (the database clock), replacing the last one. `pass`'s
    /// finishedAtMs is ignored. One transaction.
    [[nodiscard]] Result<void> record(const ReconcilePassRecord &pass);
    /// The last pass recorded, nullopt if none ever was.
    [[nodiscard]] Result<std::optional<ReconcilePassRecord>> last();

private:
    Database &m_db;
};

} // namespace flashstock
