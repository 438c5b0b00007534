#pragma once

#include "Domain.h"
#include "Result.h"

#include <QHash>
#include <QString>

#include <optional>

namespace flashstock {

class Database;

/// Who moves stock: written on every ledger row and adjustment.
struct Actor {
    QString operatorName; ///< a person or service account (`--operator`, default the OS user)
    QString source;       ///< the program: cli, console, drill, expire, reconcile, ...
};

/// Result of the invariant checks I1-I4 and I6 over the book (DESIGN.md, invariants).
struct BookCheck {
    bool i1 = true; ///< every bucket non-negative and summing to total
    bool i2 = true; ///< replaying the ledger reproduces every bucket
    bool i3 = true; ///< every order's ledger rows match its lines and status
    bool i4 = true; ///< sold / locked equal the PAID / PENDING order lines
    bool i6 = true; ///< refunds only for orders that could not take the payment, one each
    QStringList problems; ///< one line per violation, for people

    bool ok() const { return i1 && i2 && i3 && i4 && i6; }
};

/// The book of record: guarded stock moves, the order state machine and the ledger.
///
/// Every stock move is one transaction: a conditional UPDATE of a bucket that carries its
/// guard in the WHERE clause (affected rows checked), plus the ledger row with the levels
/// before and after. Rows are touched in (sku, bucket) order. Thread affinity: that of its
/// Database (one per thread). All quantities are units; all times ms since the epoch, by
/// the database clock. Bad input returns InvalidArgument naming the field and changes
/// nothing.
class Book {
public:
    Book(Database &db, Actor actor);

    const Actor &actor() const { return m_actor; }
    Database &database() { return m_db; }

    /// Creates `sku` with `stock` units spread over `buckets` buckets (an ADJUST ledger row
    /// per bucket, kind `initial`). InvalidArgument if the SKU exists or an argument is out
    /// of range (stock 0..2^31-1, buckets 1..1024).
    [[nodiscard]] Result<Adjustment> addSku(const QString &sku, qint64 stock, int buckets);
    /// Adds `qty` units of available stock, spread over the SKU's buckets; one adjustment
    /// of kind `restock` naming the operator.
    [[nodiscard]] Result<Adjustment> restock(const QString &sku, qint64 qty, const QString &reason);

    /// Moves `units` (non-zero; negative takes away) of available stock in or out, spread
    /// over the buckets, as one adjustment of `kind` (restock, stocktake, correction) that
    /// names the operator and `reason`. Taking away more than a bucket has: InvalidArgument.
    [[nodiscard]] Result<Adjustment> adjust(const QString &sku, qint64 units, const QString &kind,
                                            const QString &reason);

    /// Reserves every line for `order` or none (available -> locked): a new PENDING order
    /// that expires `holdSeconds` after the database's now. The same order with the same
    /// lines again answers Reserved with the stored lines and moves nothing; with other lines,
    /// Duplicate. An order the reconciler fenced (abandoned) is Conflict.
    [[nodiscard]] Result<ReserveResult> reserve(const QString &order, const QString &user,
                                                QList<OrderLine> lines, qint64 holdSeconds);
    /// Payment captured: CAS PENDING->PAID and locked -> sold. The same payment again:
    /// Duplicate. A CLOSED order (or a second, different payment): one refund record per
    /// payment, RefundRequired. Unknown order: NotFound.
    [[nodiscard]] Result<OrderChange> confirm(const QString &order, const QString &paymentRef);
    /// CAS PENDING->CLOSED and locked -> available. Closed before: AlreadyClosed; paid:
    /// AlreadyPaid. `reason`: timeout, cancel or risk. Unknown order: NotFound.
    [[nodiscard]] Result<OrderChange> release(const QString &order, const QString &reason);
    /// Releases every PENDING order whose hold expired by `nowMs` (default: the database's
    /// now, never the caller's clock), oldest first, each in its own transaction, in batches
    /// of `batch`. Returns the orders released.
    [[nodiscard]] Result<QList<OrderChange>> expire(std::optional<qint64> nowMs = std::nullopt, int batch = 200);

    /// The SKU's levels, book side. InvalidArgument for an unknown SKU.
    [[nodiscard]] Result<SkuLevels> levels(const QString &sku);
    /// Every SKU id, sorted.
    [[nodiscard]] Result<QStringList> skus();
    /// Ledger rows of a SKU or of an order (or `adj:<id>`), oldest first; `limit` 0 = all.
    [[nodiscard]] Result<QList<LedgerRow>> ledgerOfSku(const QString &sku, int limit = 0);
    [[nodiscard]] Result<QList<LedgerRow>> ledgerOfOrder(const QString &order);
    /// The order `order` with its lines; NotFound if the book does not know it.
    [[nodiscard]] Result<OrderView> order(const QString &order);
    /// Status of an order, or std::nullopt if unknown.
    [[nodiscard]] Result<std::optional<OrderStatus>> orderStatus(const QString &order);
    /// Number of ledger rows (all SKUs).
    [[nodiscard]] Result<qint64> ledgerCount();
    /// Refund records of an order.
    [[nodiscard]] Result<int> refundCount(const QString &order);

    /// Checks I1-I4 and I6 over the whole book with SQL aggregates.
    [[nodiscard]] Result<BookCheck> check();

    /// TEST HOOK, BREAKS THE BOOK ON PURPOSE (tests and the drill's broken-engine test only;
    /// nothing in the product sets it): reserve() reads each bucket's available level before
    /// its transaction and writes back the figure it computed (`available = read - qty`,
    /// `locked = locked + qty`, total recomputed from them so the row's CHECK passes; no guard
    /// in the WHERE clause), the read-check-write mistake of NaiveDeduct. Concurrent reserves
    /// then lose updates, units appear out of nothing and sold passes the stock: oversell
    /// that the drill must catch.
    void setNaiveReserveForTesting(bool on) { m_naiveReserve = on; }

    /// Moves `qty` available units of `sku` from bucket `from` to bucket `to` (a ledgered
    /// adjustment of kind `rebalance`: one ADJUST row on each bucket, totals follow).
    /// InvalidArgument if a bucket is unknown, they are the same, or `from` has fewer
    /// than `qty` available units.
    [[nodiscard]] Result<Adjustment> rebalance(const QString &sku, int from, int to, qint64 qty);
    /// Changes the number of buckets of `sku` to `count` (1..1024) and spreads the available
    /// units evenly over them, as one ledgered `rebalance` adjustment. Buckets are only
    /// added or emptied of available units, never deleted: a bucket beyond `count` keeps
    /// its locked and sold units (and history) until its orders end, but takes no reserve.
    [[nodiscard]] Result<Adjustment> setBucketCount(const QString &sku, int count);

    /// Validates lines (1..kMaxOrderLines of them, SKU ids, quantities 1..2^31-1), merges lines
    /// of the same SKU and sorts them by SKU, the lock order. InvalidArgument naming `line`,
    /// `sku` or `qty`.
    [[nodiscard]] static Result<QList<OrderLine>> normalizeLines(QList<OrderLine> lines);

    /// The bucket an order prefers for a SKU with `bucketCount` buckets (stable FNV-1a hash
    /// of the order id, so the same order always starts at the same bucket).
    static int preferredBucket(const QString &order, int bucketCount);

private:
    /// One bucket's share of a reserved line.
    struct BucketTake {
        int bucket = 0;
        qint64 qty = 0;
        BucketLevels after;
    };
    /// Takes `qty` units of `sku` from several buckets, in bucket order (inside the caller's
    /// transaction). Empty if the buckets together hold fewer than `qty`.
    Result<QList<BucketTake>> takeSplit(const QString &sku, qint64 qty);

    Result<int> bucketCount(const QString &sku);
    Result<OrderChange> finishOrder(const QString &order, bool pay, const QString &detail);
    Result<QList<OrderLine>> linesOf(const QString &order);
    Result<void> appendLedger(const QString &order, const QString &operation, const QString &sku, int bucket,
                              const QString &token, qint64 dAvailable, qint64 dLocked, qint64 dSold,
                              const BucketLevels &after);

    Database &m_db;
    Actor m_actor;
    QHash<QString, int> m_bucketCounts;
    bool m_naiveReserve = false; ///< setNaiveReserveForTesting(): the broken read-check-write reserve
};

} // namespace flashstock
