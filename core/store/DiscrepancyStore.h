#pragma once

#include "Discrepancy.h"
#include "Result.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

namespace flashstock {

class Database;

/// A discrepancy as the reconciler records it, with what the store needs to keep it once.
struct DiscrepancyRow {
    Discrepancy d;
    /// Idempotency key: a heal (auto_fixed) is recorded once; a finding waiting for a person
    /// once while it waits. A decided one gives its key up, so the same drift found again
    /// (a recurrence) is a new discrepancy.
    QString key;
    bool pauses = false; ///< pending: the SKU's reserves are refused until resolved
};

/// Who decides: the asserted operator (checked against the book's approvers) and where the
/// decision came from.
struct DecisionBy {
    QString operatorName;
    DecisionOrigin origin;
};

/// The `discrepancies` table: the records of reconciliation, their pauses, their alerts and
/// their decisions. Stock moves of an approval are the book's (Book's primitives, called
/// inside the decision's transaction). Thread affinity: that of its Database. Every call is
/// one statement or one transaction.
class DiscrepancyStore {
public:
    explicit DiscrepancyStore(Database &db);

    /// Records `row` unless a heal or a waiting discrepancy holds its key. Returns the new id,
    /// or nullopt if it was known.
    [[nodiscard]] Result<std::optional<qint64>> insert(const DiscrepancyRow &row);
    /// Discrepancies, newest first, optionally of one status; the pending ones with their decisions.
    [[nodiscard]] Result<QList<Discrepancy>> list(std::optional<DiscrepancyStatus> status = std::nullopt);
    /// One discrepancy with its bookkeeping; nullopt if unknown.
    [[nodiscard]] Result<std::optional<DiscrepancyRow>> get(qint64 id);
    /// SKUs with a pending discrepancy that pauses them, sorted.
    [[nodiscard]] Result<QStringList> pausedSkus();
    /// The pending discrepancies that pause their SKU, by SKU: their ids, oldest first.
    [[nodiscard]] Result<QMap<QString, QList<qint64>>> pausingDiscrepancies();
    /// True if `sku` has a pending discrepancy that pauses it (one indexed lookup).
    [[nodiscard]] Result<bool> isPaused(const QString &sku);
    /// Number of discrepancies waiting for approval.
    [[nodiscard]] Result<int> pendingCount();

    /// Discrepancies waiting for approval whose alert was not delivered yet, oldest first.
    [[nodiscard]] Result<QList<Discrepancy>> unalerted();
    /// Takes the alert of discrepancy `id` for sending: true for the one caller that got it
    /// (not delivered yet, and no other claim younger than `leaseMs`, database clock).
    [[nodiscard]] Result<bool> claimAlert(qint64 id, qint64 leaseMs);
    /// Ends a claimed alert: delivered, records it (the first delivery counts); not delivered,
    /// gives the claim back so the next pass, here or elsewhere, sends it again.
    [[nodiscard]] Result<void> finishAlert(qint64 id, bool delivered);

    /// Decides pending discrepancy `id` in one transaction: it is claimed first (so only the
    /// first decision moves anything), then Approve applies its correction through the book
    /// (re-checked against the bucket and ledger now) in the name of `approver` and
    /// `source`; Reject changes no stock. A rejection never leaves the book disagreeing with
    /// its ledger while the SKU sells: a bucket finding (I1/I2) whose bucket still disagrees
    /// with its ledger stays pending, the SKU paused, and proposes the other correction
    /// where one applies (restore to the ledger <-> accept the count as a stocktake); it
    /// closes as rejected only once the bucket agrees with its ledger (set right by hand).
    /// The same decision again returns the record as it is. InvalidArgument if unknown,
    /// decided the other way, or if approval has nothing it can apply. NotPermitted unless
    /// `by.operatorName` is on the book's approver list (checked in the same transaction).
    /// Four eyes: approving a correction above the policy's units (correctionUnits) the first
    /// time only records the approval (the answer stays pending, awaitsSecondApprover); a
    /// second approval by a different approver applies it; the same approver again is
    /// NotPermitted. Every decision is recorded with `by` and the database role.
    [[nodiscard]] Result<Discrepancy> resolve(qint64 id, Decision decision, const DecisionBy &by,
                                              const QString &reason, const QString &source);
    /// The decisions on discrepancy `id`, oldest first.
    [[nodiscard]] Result<QList<DecisionRecord>> decisions(qint64 id);

private:
    /// Discrepancies by `SELECT <columns> FROM discrepancies <whereAndOrder>` with `args` bound.
    Result<QList<Discrepancy>> select(const QString &whereAndOrder, const QVariantList &args);
    /// Applies the correction of claimed `row` (inside resolve's transaction); returns what
    /// it did, for the record.
    Result<QString> apply(const DiscrepancyRow &row, const QString &approver, const QString &reason,
                          const QString &source);
    /// A rejection of claimed `row` (inside resolve's transaction): a bucket finding whose
    /// bucket still disagrees with its ledger is put back pending with the other correction
    /// proposed where one applies. Returns what it did, for the record.
    Result<QString> reject(const DiscrepancyRow &row, const QString &approver, const QString &source);
    /// Records one decision (inside resolve's transaction).
    Result<void> recordDecision(qint64 id, Decision decision, const DecisionBy &by, const QString &reason,
                                bool applied);

    Database &m_db;
};

} // namespace flashstock
