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

/// The `discrepancies` table: the records of reconciliation, their pauses, their alerts and
/// their decisions. Stock moves of an approval are the book's (Book's primitives, called
/// inside the decision's transaction). Thread affinity: that of its Database. Every call is
/// one statement or one transaction.
class DiscrepancyStore {
public:
    explicit DiscrepancyStore(Database &db);

    /// Records `row` unless a heal or a waiting discrepancy holds its key; a bucket finding
    /// (`row.d.figures`) whose bucket has a discrepancy waiting updates that one instead, with
    /// the figures found now and the correction of the same kind where it still applies
    /// (bucketCorrections), so that one bucket waits on one discrepancy. One transaction, one
    /// recorder at a time (PostgreSQL: an advisory lock), so an id is drawn only for a
    /// discrepancy that is created. Returns the new id, or nullopt if it was known.
    [[nodiscard]] Result<std::optional<qint64>> insert(const DiscrepancyRow &row);
    /// Discrepancies, newest first, optionally of one status, with their decisions.
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

    /// Approves pending discrepancy `id` in one transaction, deciding on `decidesOn`: the
    /// correction the approver saw. The discrepancy is claimed first (so only the first
    /// decision moves anything); InvalidArgument (field `seen`) and nothing changes if it
    /// proposes another correction now, or if the SKU moved since its proposal (a bucket not
    /// at the levels found or its ledger explaining others, an order no longer in the status
    /// found): "the SKU moved; reconcile and decide again". Else it applies exactly that
    /// correction through the book in the name of `by.operatorName` and `source`.
    /// NotPermitted unless `by.operatorName` is on the book's approver list (checked in the
    /// same transaction). Four eyes, counted on what it applies (correctionUnits): above the
    /// policy's units the first approval only records itself (the answer stays pending,
    /// awaitsSecondApprover); a second approval of the same proposal applies it unless
    /// samePerson() says it comes from the first approver (by name, or by OS user, host and
    /// database role together): NotPermitted. The same decision again returns the record as
    /// it is. InvalidArgument if unknown, decided the other way, or if there is nothing it can
    /// apply. Every decision is recorded with `by`, the database role and the fingerprint of
    /// what it decided on.
    [[nodiscard]] Result<Discrepancy> approve(qint64 id, const Correction &decidesOn, const DecisionBy &by,
                                              const QString &reason, const QString &source);
    /// Rejects pending discrepancy `id` in one transaction; no stock moves. A rejection never
    /// leaves a finding that pauses its SKU unanswered while the SKU sells: one with a
    /// correction stays pending (the SKU paused) while the book still shows it, proposing
    /// the next correction that applies (bucketCorrections, on the bucket as it is now; the
    /// same one when no other does), and closes as rejected once the bucket agrees with its
    /// ledger and orders, or the order left the status found. Findings that do not pause, or
    /// that no correction answers, close. The same decision again returns the record as it
    /// is; InvalidArgument if unknown or approved; NotPermitted as approve.
    [[nodiscard]] Result<Discrepancy> reject(qint64 id, const DecisionBy &by, const QString &reason,
                                             const QString &source);
    /// The decisions on discrepancy `id`, oldest first.
    [[nodiscard]] Result<QList<DecisionRecord>> decisions(qint64 id);

private:
    /// Discrepancies by `SELECT <columns> FROM discrepancies <whereAndOrder>` with `args` bound.
    Result<QList<Discrepancy>> select(const QString &whereAndOrder, const QVariantList &args);
    /// The decisions of discrepancies `ids`, oldest first, each with its own (one statement).
    Result<void> attachDecisions(QList<Discrepancy> &list);
    /// Inside insert's transaction: pending bucket discrepancy `id` brought up to what bucket
    /// finding `found` saw, unless it was decided meanwhile.
    Result<void> refresh(qint64 id, const DiscrepancyRow &found);
    /// Writes `correction`, `figures` and `proposal` into discrepancy `id` (columns only).
    Result<void> writeProposal(qint64 id, const Correction &correction, const std::optional<BucketFigures> &figures,
                               const QString &proposal);
    /// The decision itself (approve and reject): see those.
    Result<Discrepancy> decide(qint64 id, Decision decision, const Correction &decidesOn, const DecisionBy &by,
                               const QString &reason, const QString &source);
    /// Inside the decision's transaction: InvalidArgument ("the SKU moved; reconcile and
    /// decide again", field `seen`) unless the book is still as `d`'s proposal found it; a
    /// bucket is locked and read, its ledger replayed.
    Result<void> requireUnmoved(const Discrepancy &d);
    /// Applies the correction of claimed, unmoved `d` (inside the decision's transaction);
    /// returns what it did, for the record.
    Result<QString> apply(const Discrepancy &d, const QString &approver, const QString &reason,
                          const QString &source);
    /// A rejection of claimed `row` (inside the decision's transaction): see reject().
    /// Returns what it did, for the record.
    Result<QString> reopenOrClose(const DiscrepancyRow &row, const QString &approver, const QString &source);
    /// The signer of a decision by `by` on this connection (its database role included).
    Result<Signer> signerOf(const DecisionBy &by);
    /// Records one decision (inside the decision's transaction).
    Result<void> recordDecision(qint64 id, Decision decision, const DecisionBy &by, const QString &reason,
                                bool applied, const QString &seen);

    Database &m_db;
};

} // namespace flashstock
