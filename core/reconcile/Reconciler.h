#pragma once

#include "Discrepancy.h"
#include "Result.h"
#include "store/Invariants.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace flashstock {

class Engine;
class DiscrepancyStore;
class LedgerWatermark;
struct DiscrepancyRow;
struct GateToken;

/// What one pass found and did.
struct ReconcileReport {
    QList<Discrepancy> discrepancies; ///< new this pass (auto_fixed and pending_approval)
    int autoFixed = 0;
    int pendingApproval = 0;          ///< new this pass
    int stillPending = 0;             ///< all discrepancies waiting for a person after the pass
    QStringList warnings;             ///< trouble that did not stop the pass (e.g. gate unreachable)
    LineScan lines;                   ///< how the window's order lines were read (memory: one batch)
};

/// The reconciler: compares gate, book, ledger and orders, heals the gate by itself and
/// holds disagreements of the book for an operator's approval. Uses the engine's book and
/// gate; same thread affinity as the Engine.
class Reconciler {
public:
    explicit Reconciler(Engine &engine);
    ~Reconciler();

    /// The shortest grace that never fences a live reserve: the time a reserve's book step
    /// may legitimately wait for the write lock (Database::kLockWaitMs), ms. A shorter one
    /// only for tests (`reconcile --unsafe-grace`).
    static qint64 minSafeGraceMs();

    /// One pass. `graceMs`: how old a held token must be, by Redis time, before it counts
    /// as orphaned. Idempotent: a second pass over an unchanged state finds nothing new.
    [[nodiscard]] Result<ReconcileReport> runPass(qint64 graceMs = 30000);

    /// Discrepancies, newest first; `status` filters when set.
    [[nodiscard]] Result<QList<Discrepancy>> list(std::optional<DiscrepancyStatus> status = std::nullopt);
    /// Pending discrepancies whose alert was not delivered yet (see DiscrepancyStore::unalerted).
    [[nodiscard]] Result<QList<Discrepancy>> unalerted();
    /// See DiscrepancyStore::claimAlert.
    [[nodiscard]] Result<bool> claimAlert(qint64 id, qint64 leaseMs);
    /// See DiscrepancyStore::finishAlert.
    [[nodiscard]] Result<void> finishAlert(qint64 id, bool delivered);
    /// One discrepancy; InvalidArgument naming `id` if unknown.
    [[nodiscard]] Result<Discrepancy> get(qint64 id);
    /// Approves pending discrepancy `id` on the correction its approver saw (`decidesOn`,
    /// the discrepancy's `correction` as it was shown): applied once, exactly, as a ledgered
    /// adjustment naming `by.operatorName`; then the SKU's gate follows the book
    /// (Engine::gateFollowsDecision). InvalidArgument (field `seen`) and nothing changes if
    /// the discrepancy proposes another correction now or the SKU moved since its proposal
    /// ("the SKU moved; reconcile and decide again": a pass brings the proposal up to date).
    /// `by` is who decides: the face fills its origin from the OS (decisionOrigin()).
    /// NotPermitted unless `by.operatorName` is on the book's approver policy; `seedApprovers`
    /// (the data dir's list, seedApprovers()) seeds that policy once while the book has none.
    /// Four eyes and the decision's record: see DiscrepancyStore::approve.
    [[nodiscard]] Result<Discrepancy> approve(qint64 id, const Correction &decidesOn, const DecisionBy &by,
                                              const QString &reason, const QStringList &seedApprovers);
    /// Rejects a pending discrepancy without changing stock (see DiscrepancyStore::reject:
    /// one that pauses its SKU may stay open with another correction proposed); the gate
    /// follows as after approve. NotPermitted as approve.
    [[nodiscard]] Result<Discrepancy> reject(qint64 id, const DecisionBy &by, const QString &reason,
                                             const QStringList &seedApprovers);

    /// Ledger rows younger than this (ms, database clock) stay in the window of the next pass
    /// too, so a slow transaction that got a lower id is never skipped; so do rows written
    /// after the pass's book check began, however long the pass takes. Default 5000.
    void setWatermarkLagMs(qint64 lagMs) { m_lagMs = lagMs; }
    /// Order lines the book check reads per statement (kLinesPerCheckBatch unless a test sets
    /// a small one to cross batch boundaries; see checkInvariants).
    void setLinesPerBatch(int lines) { m_linesPerBatch = lines; }

private:
    /// The book's invariants over the window since the watermark; a new finding is recorded
    /// pending approval and pauses its SKU. Returns the last ledger id the check covered
    /// (BookCheck::checkedThrough).
    Result<qint64> checkBook(ReconcileReport &report);
    /// Every SKU's gate: pauses, sales, tokens and levels against the book (gate unreachable:
    /// a warning, the gate is left for the next pass).
    Result<void> checkGates(qint64 graceMs, ReconcileReport &report);
    /// Gives back the units of dead tokens of `sku`; true if a token may still be in flight.
    bool healTokens(const QString &sku, qint64 nowMs, qint64 graceMs, ReconcileReport &report);
    /// The gate's available of `sku` set to the book's, if nothing is in flight and they differ.
    void healLevels(const QString &sku, ReconcileReport &report);
    /// Records a given-back token's discrepancy, then releases it in the gate.
    void giveBack(const QString &sku, const GateToken &token, DiscrepancyKind kind, const QString &why,
                  ReconcileReport &report);
    bool record(const DiscrepancyRow &row, ReconcileReport &report);
    Result<Discrepancy> decide(qint64 id, Decision decision, const Correction &decidesOn, const DecisionBy &by,
                               const QString &reason, const QStringList &seedApprovers);

    Engine &m_engine;
    std::unique_ptr<DiscrepancyStore> m_store;
    std::unique_ptr<LedgerWatermark> m_watermark;
    qint64 m_lagMs = 5000;
    int m_linesPerBatch = kLinesPerCheckBatch;
};

} // namespace flashstock
