#pragma once

#include "Domain.h"
#include "Result.h"
#include "reconcile/Reconciler.h"

#include <QHash>
#include <QList>
#include <QString>

#include <optional>

namespace flashstock {

class Database;

/// One bucket's three moving levels (units), as found or as a correction's target.
struct Levels3 {
    qint64 available = 0;
    qint64 locked = 0;
    qint64 sold = 0;
    qint64 total() const { return available + locked + sold; }
    bool valid() const { return available >= 0 && locked >= 0 && sold >= 0; }
    bool operator==(const Levels3 &) const = default;
};

/// A discrepancy with what the store needs to heal or correct it idempotently.
struct DiscrepancyRow {
    Discrepancy d;
    QString key;                 ///< idempotency key: the same finding is recorded once
    bool pauses = false;         ///< pending: the SKU's reserves are refused until resolved
    std::optional<Levels3> found;  ///< the bucket as found (book kinds)
    std::optional<Levels3> target; ///< restore: the levels the ledger explains
};

/// A bucket whose levels break I1 or differ from what its ledger replays to.
struct BucketProblem {
    QString sku;
    int bucket = 0;
    Levels3 found;
    qint64 total = 0;  ///< the bucket's stored total
    Levels3 ledger;    ///< checkpoint + window replay
};

/// An order line whose status disagrees with its ledger rows (I3), or a ledger row without
/// its order line.
struct OrderProblem {
    QString order;
    QString sku;
    int bucket = 0;
    qint64 qty = 0;
    QString status;          ///< as stored (PENDING, PAID, CLOSED)
    QString explained;       ///< what its ledger rows explain (PENDING, PAID, CLOSED, or "" if none)
    QString token;
};

/// A payment recorded on a CLOSED order that has no refund record (I6).
struct PaymentProblem {
    QString order;
    QString sku;
    QString payment;
};

/// SQL of reconciliation: the `discrepancies` table, the ledger watermark and checkpoints,
/// the order fence, windowed invariant checks and approved corrections. Thread affinity: that
/// of its Database. Every call is one statement or one transaction.
class DiscrepancyStore {
public:
    explicit DiscrepancyStore(Database &db);

    /// Records `row` unless its key exists. Returns the new id, or nullopt if it was known.
    [[nodiscard]] Result<std::optional<qint64>> insert(const DiscrepancyRow &row);
    /// Discrepancies, newest first, optionally of one status.
    [[nodiscard]] Result<QList<Discrepancy>> list(std::optional<DiscrepancyStatus> status = std::nullopt);
    /// One discrepancy with its correction data; nullopt if unknown.
    [[nodiscard]] Result<std::optional<DiscrepancyRow>> get(qint64 id);
    /// SKUs with a pending discrepancy that pauses them, sorted.
    [[nodiscard]] Result<QStringList> pausedSkus();
    /// True if `sku` has a pending discrepancy that pauses it (one indexed lookup).
    [[nodiscard]] Result<bool> isPaused(const QString &sku);
    /// Discrepancies waiting for approval whose alert was not delivered yet, oldest first.
    [[nodiscard]] Result<QList<Discrepancy>> unalerted();
    /// Takes the alert of discrepancy `id` for sending: true for the one caller that got it
    /// (not delivered yet, and no other claim younger than `leaseMs`, database clock).
    [[nodiscard]] Result<bool> claimAlert(qint64 id, qint64 leaseMs);
    /// Ends a claimed alert: delivered, records it (the first delivery counts); not delivered,
    /// gives the claim back so the next pass, here or elsewhere, sends it again.
    [[nodiscard]] Result<void> finishAlert(qint64 id, bool delivered);
    /// Number of discrepancies waiting for approval.
    [[nodiscard]] Result<int> pendingCount();

    /// Fences `order` in the book: inserts it as ABANDONED unless it exists. Returns the
    /// order's status afterwards (ABANDONED if fenced now or before).
    [[nodiscard]] Result<QString> fenceOrder(const QString &order, const QString &user);
    /// Status of `order` and the token its line of `sku` carries; nullopt if no such order.
    [[nodiscard]] Result<std::optional<std::pair<QString, QString>>> orderOf(const QString &order, const QString &sku);

    /// Book available per SKU (sum over buckets).
    [[nodiscard]] Result<QHash<QString, qint64>> bookAvailable();
    /// Highest ledger id of `sku` (0 if none): part of the gate heals' keys.
    [[nodiscard]] Result<qint64> lastLedgerId(const QString &sku);

    /// The ledger watermark: checkpoints hold the ledger replayed up to this id.
    [[nodiscard]] Result<qint64> watermark();
    /// Buckets breaking I1 or I2 (checkpoint + ledger rows after the watermark), one snapshot.
    [[nodiscard]] Result<QList<BucketProblem>> bucketProblems();
    /// I3 over the orders with ledger rows after the watermark.
    [[nodiscard]] Result<QList<OrderProblem>> orderProblems();
    /// I6 over the orders with ledger rows after the watermark.
    [[nodiscard]] Result<QList<PaymentProblem>> paymentProblems();
    /// Moves the watermark to the last ledger row older than `lagMs` (so rows of slower
    /// transactions with lower ids are not skipped), folding the rows passed into the
    /// checkpoints. One transaction. Returns the new watermark.
    [[nodiscard]] Result<qint64> advanceWatermark(qint64 lagMs);

    /// Resolves pending discrepancy `id` in one transaction: approve applies its correction
    /// (re-checked against the bucket and ledger now) as a ledgered adjustment naming
    /// `approver`; reject changes no stock. Only the first call moves anything; later calls
    /// return the record as it is. InvalidArgument if unknown or if approval has nothing it
    /// can apply.
    [[nodiscard]] Result<Discrepancy> resolve(qint64 id, bool approve, const QString &approver, const QString &reason,
                                              const QString &source);

private:
    /// Discrepancies by `SELECT <columns> FROM discrepancies <whereAndOrder>` with `args` bound.
    Result<QList<Discrepancy>> select(const QString &whereAndOrder, const QVariantList &args);
    /// `ledger ... WHERE id > after`: the window of one pass (see the .cpp for why a literal).
    QString ledgerWindow(qint64 after) const;
    Result<Levels3> replay(const QString &sku, int bucket);
    Result<QString> applyCorrection(const DiscrepancyRow &row, const QString &approver, const QString &reason,
                                    const QString &source);

    Database &m_db;
};

} // namespace flashstock
