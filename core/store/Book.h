#pragma once

#include "Domain.h"
#include "Result.h"
#include "store/BookLocks.h"
#include "store/Invariants.h"

#include <QHash>
#include <QString>

#include <functional>
#include <optional>
#include <utility>

namespace flashstock {

class Database;

/// One bucket's share of a reserved line.
struct BucketTake {
    int bucket = 0;
    qint64 qty = 0;     ///< units taken from it
    BucketLevels after; ///< its levels after the take
};

/// One order of a reserve batch (Book::reserveBatch).
struct ReserveOrder {
    QString order;
    QString user;            ///< empty: anonymous
    QList<OrderLine> lines;  ///< with the gate's tokens when a gate is in front
    qint64 holdSeconds = kDefaultHoldSeconds;
    /// Units per user the book itself enforces, by SKU (a sale's per-user limit when its
    /// reserves skip the gate; the gate enforces it otherwise). Absent or 0: no limit.
    QHash<QString, qint64> userLimits;
    /// Who reserves: the order's creator and its RESERVE rows' operator and source. An
    /// existing order it does not reach (Actor::reaches) answers Duplicate and shows
    /// nothing of it. Without a name (the default): the Book's own actor.
    Actor actor{};
};

/// One order of a confirm or release batch: the payment reference, or the release reason
/// (timeout, cancel, risk).
struct FinishOrder {
    QString order;
    QString detail;
    /// Who confirms or releases: its ledger rows' and refund's operator and source. An order
    /// it does not reach (Actor::reaches) answers NotFound exactly as an unknown order, and
    /// nothing moves. Without a name (the default): the Book's own actor.
    Actor actor{};
};

/// How Book::reserve takes a line's units from its SKU's buckets: a test seam
/// (Book::setLineTakerForTesting). Called on the book's thread with its Database.
class LineTaker {
public:
    virtual ~LineTaker() = default;
    /// Before the reserve's transaction, once per line (`buckets`: the SKU's bucket count).
    [[nodiscard]] virtual Result<void> beforeTransaction(Database &db, const QString &order, const OrderLine &line,
                                                         int buckets) = 0;
    /// Inside the reserve's transaction: takes `line.qty` units of `line.sku`. Empty if it
    /// cannot (the reserve answers out_of_stock).
    [[nodiscard]] virtual Result<QList<BucketTake>> take(Database &db, const QString &order, const OrderLine &line,
                                                         int buckets) = 0;
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
    /// `actor`: who acts in this Book's operations that name no one else (adjustments, the
    /// single-order reserve, confirm, release, expiry, and batch orders without an actor).
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
    /// Duplicate. An order the reconciler fenced (abandoned) is reserved again by an attempt
    /// with fresh tokens; the fenced attempt (a token given back) is Conflict (transient: a
    /// retry gets a fresh token). A reserve batch of one (reserveBatch).
    [[nodiscard]] Result<ReserveResult> reserve(const QString &order, const QString &user,
                                                QList<OrderLine> lines, qint64 holdSeconds);

    // --- batches (group commit) -------------------------------------------------------------
    // Many orders in one write transaction: each order's statements run inside its own
    // savepoint, so a refusal or a failure of one order (out of stock, over a per-user limit,
    // a duplicate, bad input, a broken constraint) undoes that order alone, never its
    // neighbours. On PostgreSQL a one-line order first tries its whole reserve as one
    // guarded statement (sql::reserveOneLine: it writes all or nothing, so it needs no
    // savepoint); only when that does not reserve do the statements above answer. Each order gets exactly the answer it would get alone, with the same guards
    // and ledger rows. On PostgreSQL the batch first locks every bucket it is about to touch
    // in (sku, bucket) order, so two batches cannot deadlock. The answers come in the order
    // of the input. Errors that concern the whole transaction (the book unreachable, races
    // lost after every retry) are every order's answer. A connection lost at COMMIT
    // (ErrorCode::OutcomeUnknown) is never answered on a guess: each order is run again on
    // its own (the orders table and the ledger's unique keys make that safe) and answers
    // what the book then holds; only if that fails as well is its answer OutcomeUnknown.

    /// Reserves each order as reserve() would, plus the book's per-user limits
    /// (ReserveOrder::userLimits: LimitExceeded naming the SKU).
    [[nodiscard]] QList<Result<ReserveResult>> reserveBatch(const QList<ReserveOrder> &orders);
    /// Confirms each order as confirm() would.
    [[nodiscard]] QList<Result<OrderChange>> confirmBatch(const QList<FinishOrder> &orders);
    /// Releases each order as release() would.
    [[nodiscard]] QList<Result<OrderChange>> releaseBatch(const QList<FinishOrder> &orders);
    /// Payment captured: CAS PENDING->PAID and locked -> sold. The same payment again:
    /// Duplicate. A CLOSED order (or a second, different payment): one refund record per
    /// payment, RefundRequired. Unknown order: NotFound.
    [[nodiscard]] Result<OrderChange> confirm(const QString &order, const QString &paymentRef);
    /// CAS PENDING->CLOSED and locked -> available. Closed before: AlreadyClosed; paid:
    /// AlreadyPaid. `reason`: timeout, cancel or risk. Unknown order: NotFound.
    [[nodiscard]] Result<OrderChange> release(const QString &order, const QString &reason);
    /// Releases every PENDING order whose hold expired by `nowMs` (default: the database's
    /// now, never the caller's clock), oldest first, in release batches (releaseBatch) of
    /// `batch` orders, each order with its own outcome; `onReleased` (if set) is called for
    /// each order released as soon as its batch committed, so its gate units can go back at
    /// once. Returns the orders released; an order that fails is left for the next run (the
    /// others go on).
    [[nodiscard]] Result<QList<OrderChange>> expire(std::optional<qint64> nowMs = std::nullopt, int batch = 200,
                                                    const std::function<void(const OrderChange &)> &onReleased = {});
    /// Orders released in the book (expiry, release) whose gate tokens may still hold their
    /// units: the gate was not told yet (a run killed half-way, Redis unreachable). At most
    /// `limit` orders, each with its lines and tokens; outcome AlreadyClosed.
    [[nodiscard]] Result<QList<OrderChange>> gateReleasesDue(int limit = 200);
    /// Records that the gate took back the units of released `order` (see gateReleasesDue).
    [[nodiscard]] Result<void> gateReleased(const QString &order);

    /// The SKU's levels, book side. InvalidArgument for an unknown SKU.
    [[nodiscard]] Result<SkuLevels> levels(const QString &sku);
    /// What a gate restore reads of the book (GateRestore): the SKU's available and which
    /// of `tokens` (gate tokens) the SKU's lines of live (PENDING or PAID) orders carry.
    struct RestoreView {
        qint64 available = 0; ///< units, all buckets
        QStringList booked;   ///< those of `tokens` the book holds
    };
    /// Reads both at one instant: one transaction that first locks the SKU's buckets
    /// (PostgreSQL: FOR UPDATE; SQLite: BEGIN IMMEDIATE), so no reserve, confirm or release
    /// of the SKU commits between them; writes nothing. InvalidArgument for an unknown SKU.
    [[nodiscard]] Result<RestoreView> restoreView(const QString &sku, const QStringList &tokens);
    /// Every SKU id, sorted.
    [[nodiscard]] Result<QStringList> skus();
    /// Every SKU's levels (each with its buckets), sorted by SKU: one query.
    [[nodiscard]] Result<QList<SkuLevels>> allLevels();
    /// Ledger rows of a SKU or of an order (or `adj:<id>`), oldest first; `limit` 0 = all
    /// (the newest `limit` rows otherwise). `bucket` >= 0: that bucket's rows only.
    [[nodiscard]] Result<QList<LedgerRow>> ledgerOfSku(const QString &sku, int limit = 0, int bucket = -1);
    /// The newest `limit` (1..10000) ledger rows of every SKU, oldest first: recent activity.
    [[nodiscard]] Result<QList<LedgerRow>> recentLedger(int limit);
    [[nodiscard]] Result<QList<LedgerRow>> ledgerOfOrder(const QString &order);
    /// The order `order` with its lines; NotFound if the book does not know it.
    [[nodiscard]] Result<OrderView> order(const QString &order);
    /// The order as `asker` may see it: an order it does not reach (Actor::reaches) is
    /// NotFound with the very error of an unknown order.
    [[nodiscard]] Result<OrderView> order(const QString &order, const Actor &asker);
    /// Status of an order, or std::nullopt if unknown.
    [[nodiscard]] Result<std::optional<OrderStatus>> orderStatus(const QString &order);
    /// Number of ledger rows (all SKUs).
    [[nodiscard]] Result<qint64> ledgerCount();
    /// Refund records of an order.
    [[nodiscard]] Result<int> refundCount(const QString &order);
    /// The refund records of an order, oldest first (empty for an unknown order).
    [[nodiscard]] Result<QList<Refund>> refunds(const QString &order);

    /// Checks I1-I4 and I6 over the whole book (checkInvariants over the whole ledger: the
    /// definition the reconciler's passes use too).
    [[nodiscard]] Result<BookCheck> check();

    /// Fences one attempt of `order` for the reconciler, before it gives gate token `token`
    /// back: the order is inserted as ABANDONED (no lines, no ledger row) unless it exists,
    /// and, while it is ABANDONED, the token is recorded as fenced (one transaction). A late
    /// reserve carrying that token then fails; a retry with a fresh token takes the order
    /// over (Book::reserve). Returns the order's status afterwards (Abandoned if fenced).
    [[nodiscard]] Result<OrderStatus> fenceOrder(const QString &order, const QString &user, const QString &token);
    /// An order's status and the gate token its line of one SKU carries.
    struct OrderOnSku {
        OrderStatus status = OrderStatus::Pending;
        QString token; ///< empty if the order has no line of the SKU (or no token on it)
    };
    /// `order` as seen from `sku`'s gate; nullopt if the book has no such order.
    [[nodiscard]] Result<std::optional<OrderOnSku>> orderOnSku(const QString &order, const QString &sku);
    /// Highest ledger id of `sku` (0 if none).
    [[nodiscard]] Result<qint64> lastLedgerId(const QString &sku);

    // --- inside a caller's transaction -----------------------------------------------------
    // The statements of approved corrections. Each runs inside a Database::write that the
    // caller opened on this Book's Database, and commits or rolls back with it; whatever it
    // writes names this Book's actor. Quantities are units.

    /// Records an adjustment of `units` of kind `kind` (initial, restock, stocktake,
    /// correction, rebalance) with `reason`; returns its id (its ledger rows carry `adj:<id>`).
    [[nodiscard]] Result<qint64> recordAdjustment(const QString &sku, const QString &kind, qint64 units,
                                                  const QString &reason);
    /// Locks bucket `bucket` of `sku` for the caller's transaction (PostgreSQL: FOR UPDATE;
    /// SQLite: BEGIN IMMEDIATE made the transaction the only writer) and reads its levels and
    /// total; nullopt if there is no such bucket.
    [[nodiscard]] Result<std::optional<BucketLevels>> lockBucket(const QString &sku, int bucket);
    /// An approved bucket correction, once the caller has locked the bucket and found it still
    /// at `found` with its ledger explaining `ledger`: sets the bucket to `target` (its total
    /// follows) if that differs, and records an adjustment of kind `kind` (`correction` or
    /// `stocktake`) whose ADJUST row moves what the ledger explains from `ledger` to `target`
    /// (zero deltas for a restore: the ledger explains the target already), with the bucket's
    /// levels before and after. Returns the adjustment's id. Conflict if the bucket is no
    /// longer `found`.
    [[nodiscard]] Result<qint64> setBucket(const QString &sku, int bucket, const Levels3 &found,
                                           const Levels3 &ledger, const Levels3 &target, const QString &kind,
                                           const QString &reason);
    /// Sets `order` from `from` to `to` (version + 1), recorded as an adjustment of `sku` of
    /// kind `correction` and 0 units. Returns the adjustment's id, or nullopt if the order is
    /// no longer `from` (nothing written).
    [[nodiscard]] Result<std::optional<qint64>> changeOrderStatus(const QString &order, const QString &sku,
                                                                  OrderStatus from, OrderStatus to,
                                                                  const QString &reason);
    /// Names discrepancy `discrepancy` as what adjustment `adjustment` resolves (the ledger
    /// then shows it beside the adjustment's units and reason).
    [[nodiscard]] Result<void> linkAdjustment(qint64 adjustment, qint64 discrepancy);
    /// Records one refund of `payment` on `order` by this Book's actor (kept once per order
    /// and payment: a second call changes nothing).
    [[nodiscard]] Result<void> recordRefund(const QString &order, const QString &payment, const QString &reason);
    /// The same, recorded as `by`'s.
    [[nodiscard]] Result<void> recordRefund(const QString &order, const QString &payment, const QString &reason,
                                            const Actor &by);

    /// TEST SEAM (tests and the drill's broken-engine rehearsal; nothing in the product sets
    /// one): reserve() takes each line's units through `taker` instead of the book's own
    /// guarded take (see NaiveReserve, the read-check-write mistake the drill must catch).
    /// nullptr restores the book's own. Not owned; it must outlive its use.
    void setLineTakerForTesting(LineTaker *taker) { m_taker = taker; }

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
    /// Validates a reserve's input (InvalidArgument naming the field) and returns its lines,
    /// normalised, with every SKU's bucket count known.
    Result<QList<OrderLine>> checkReserve(const QString &order, const QString &user, QList<OrderLine> lines,
                                          qint64 holdSeconds);
    /// The answer to `by`'s reserve of an order that exists (inside the reserve's
    /// transaction): Reserved with the stored lines for the same lines, else Duplicate (an
    /// order `by` does not reach: Duplicate with none of its lines), with the asked tokens
    /// the order holds (ReserveResult::heldTokens); `fenced` when the reconciler abandoned it
    /// (one its takeOverFenced did not find: a fence that came after).
    Result<ReserveResult> answerExisting(const QString &order, const QList<OrderLine> &wanted, const Actor &by,
                                         bool &fenced);
    /// A refused reserve's answer if the order exists (inside the reserve's transaction):
    /// true with `out` set as answerExisting() for an order the book holds, true with
    /// `fenced` set for an order the reconciler fenced for one of these tokens; false (a new
    /// order, or a fenced one this attempt may take over) if the refusal stands.
    Result<bool> existingAnswer(const ReserveOrder &order, const QList<OrderLine> &wanted, ReserveResult &out,
                                bool &fenced);
    /// True if a fence of `order` holds one of the gate tokens of `wanted`.
    Result<bool> fencedToken(const QString &order, const QList<OrderLine> &wanted);
    /// A reserve of an order the reconciler fenced (ABANDONED), inside the reserve's
    /// transaction: an attempt whose tokens no fence holds takes the order over (PENDING
    /// again, a new hold, created by `by`) and returns its expires_at; one carrying a fenced
    /// token sets `fenced`. nullopt if the order is not ABANDONED (or fenced).
    Result<std::optional<qint64>> takeOverFenced(const QString &order, const QString &user,
                                                 const QList<OrderLine> &wanted, qint64 holdSeconds, const Actor &by,
                                                 bool &fenced);
    /// The book's guarded take of one line: its preferred bucket, else one that has enough
    /// (borrow), else several (split). Empty if the buckets together hold fewer than qty.
    Result<QList<BucketTake>> takeLine(const QString &order, const OrderLine &line, int buckets);
    /// The guarded UPDATE of one bucket; nullopt if it has fewer than `line.qty` available.
    Result<std::optional<BucketTake>> takeFromBucket(const OrderLine &line, int bucket);
    /// Takes the line from several buckets, in bucket order (inside the caller's transaction).
    /// Empty if the buckets together hold fewer than its qty.
    Result<QList<BucketTake>> takeSplit(const OrderLine &line, int buckets);
    /// The order lines and RESERVE ledger rows (by `by`) of a line's parts.
    Result<void> recordTake(const QString &order, const OrderLine &line, const QList<BucketTake> &parts,
                            const Actor &by);

    Result<int> bucketCount(const QString &sku);
    /// How an order leaves PENDING.
    enum class Finish {
        Pay,     ///< confirm: locked -> sold, `detail` is the payment reference
        Release, ///< release: locked -> available, `detail` is the reason
    };
    /// Whether a batch runs its orders again one by one when its outcome is unknown.
    enum class Replay { OnUnknown, Never };
    /// What one order's statements did inside a batch.
    enum class OrderStep {
        Keep, ///< its writes stay (an answer that moved or recorded something)
        Undo, ///< its writes are rolled back (a refusal)
    };
    /// How one order runs inside a batch.
    struct OrderRun {
        bool several = false;     ///< the batch has other orders: undo needs a savepoint
        bool inSavepoint = false; ///< the order's savepoint is open (by the batch or the body)
    };
    /// One order's statements inside a batch: stores its answer itself. With several orders,
    /// a body that writes before it knows its answer first opens the order's savepoint
    /// (Database::savepoint, then run.inSavepoint = true) unless it is open already. An
    /// error of the whole batch kind (Conflict, Unavailable, OutcomeUnknown) ends the
    /// transaction, any other error is that order's alone.
    using OrderBody = std::function<Result<OrderStep>(qsizetype index, OrderRun &run)>;
    /// Runs `body` for each of `indexes` in one write transaction, after locking `locks`
    /// ((sku, bucket) pairs) in order on PostgreSQL (BookLocks::lockFirst; a body takes any
    /// other bucket through m_locks before its order rows); with several orders each order whose
    /// `savepointFirst` says so (always under a write-fault seam) runs in a savepoint opened
    /// before its body. `orderIds[i]` names order i for the write-fault seam. Returns the
    /// batch's error, or the per-order errors (nullopt: the body's answer stands) in
    /// `orderErrors`. An order that fails outside a savepoint (PostgreSQL then refuses the
    /// rest of the transaction) rolls the batch back with `rerunAlone` set: the caller runs
    /// each order on its own. `prelude`, if given, runs first inside the transaction (again
    /// if the transaction is retried); its error rolls the batch back with `rerunAlone` set
    /// unless it is of the whole batch kind.
    Result<void> runBatch(const QList<qsizetype> &indexes, const QStringList &orderIds,
                          const QList<BookLocks::Bucket> &locks, const std::function<bool(qsizetype)> &savepointFirst,
                          const OrderBody &body, QList<std::optional<Error>> &orderErrors, bool &rerunAlone,
                          const std::function<Result<void>()> &prelude = {});
    QList<Result<ReserveResult>> reserveOrders(const QList<ReserveOrder> &orders, Replay replay);
    /// Order `order`'s part of a reserve batch (inside the batch's transaction).
    Result<OrderStep> reserveOne(const ReserveOrder &order, const QList<OrderLine> &wanted, OrderRun &run,
                                 ReserveResult &out, bool &fenced);
    /// PostgreSQL: a one-line order reserved in one statement (sql::reserveOneLine) from its
    /// preferred bucket; false (nothing written) if the order exists or the bucket is short.
    Result<bool> reserveInOneStatement(const ReserveOrder &order, const OrderLine &line, ReserveResult &out);
    /// Whether reserveInOneStatement() applies to the order.
    bool oneStatement(const ReserveOrder &order, const QList<OrderLine> &wanted) const;
    /// Inside a batch's transaction, both dialects: reserves at once, in a few statements for
    /// the whole batch whatever its size, those of `candidates` that are one-line orders of
    /// new ids with no user limit and fit their preferred bucket: one guarded UPDATE of every
    /// (sku, bucket) for its group's total (a bucket that cannot cover its whole group is then
    /// read under its lock and takes those that fit, in arrival order), then one INSERT each
    /// for their orders, lines and RESERVE ledger rows (the levels before and after each order
    /// as if it had run alone, in arrival order). Sets `answers[i]` and `grouped[i]` for each
    /// one reserved; the others are left to reserveOne(). Errors as Database::exec();
    /// Conflict (the batch runs again) if another transaction inserted one of the orders.
    Result<void> reserveGrouped(const QList<ReserveOrder> &orders, const QList<QList<OrderLine>> &wanted,
                                const QList<qsizetype> &candidates, QList<ReserveResult> &answers,
                                QList<char> &grouped);
    /// A confirm's or release's input (InvalidArgument naming `order`, `payment` or `reason`).
    static Result<void> checkFinish(const QString &order, Finish finish, const QString &detail);
    QList<Result<OrderChange>> finishOrders(const QList<FinishOrder> &orders, Finish finish, Replay replay);
    /// Order `order`'s part of a confirm or release batch by `by` (inside the batch's
    /// transaction); `unknown` for an order the book does not hold or `by` does not reach.
    Result<OrderStep> finishOne(const QString &order, Finish finish, const QString &detail, const Actor &by,
                                OrderChange &out, bool &unknown);
    /// PostgreSQL: the (sku, bucket) pairs the orders' lines hold, for the batch's lock.
    Result<QList<std::pair<QString, int>>> bucketsOfOrders(const QStringList &orders);
    Result<QList<OrderLine>> linesOf(const QString &order);
    /// Appends one ledger row by `by`: `delta` moved the bucket to `after` (before = after - delta).
    Result<void> appendLedger(const QString &order, const QString &operation, const QString &sku, int bucket,
                              const QString &token, const Levels3 &delta, const BucketLevels &after, const Actor &by);
    /// Appends one ledger row by `by` with its levels before and after given (a correction's
    /// row, whose deltas are not the difference of the bucket's levels).
    Result<void> appendLedgerRow(const QString &order, const QString &operation, const QString &sku, int bucket,
                                 const QString &token, const Levels3 &delta, const Levels3 &before,
                                 const Levels3 &after, const Actor &by);
    /// The same by this Book's actor (an approved correction's row).
    Result<void> appendLedgerRow(const QString &order, const QString &operation, const QString &sku, int bucket,
                                 const QString &token, const Levels3 &delta, const Levels3 &before,
                                 const Levels3 &after)
    {
        return appendLedgerRow(order, operation, sku, bucket, token, delta, before, after, m_actor);
    }
    /// Who acts for an order of a batch: its own actor, or this Book's if it names no one.
    const Actor &actorOf(const Actor &actor) const { return actor.operatorName.isEmpty() ? m_actor : actor; }
    /// Moves `delta` available units of one bucket in or out (total follows) for adjustment
    /// `adjustment`, with its ADJUST ledger row. False if the bucket has fewer than -delta.
    Result<bool> adjustBucket(qint64 adjustment, const QString &sku, int bucket, qint64 delta);

    Database &m_db;
    BookLocks m_locks; ///< the lock order of the transaction this Book writes now
    Actor m_actor;
    QHash<QString, int> m_bucketCounts;
    LineTaker *m_taker = nullptr; ///< setLineTakerForTesting(); nullptr: the book's own take
};

} // namespace flashstock
