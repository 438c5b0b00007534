#pragma once

#include "Outcome.h"

#include <QList>
#include <QString>

#include <optional>

namespace flashstock {

/// Default hold of a reservation when no sale says otherwise, in seconds.
inline constexpr qint64 kDefaultHoldSeconds = 900;

/// Who acts on the book (the principal): the name and program written on every order it
/// creates and every ledger row, adjustment and refund it writes, and which orders it may
/// touch. A plain value that travels with each operation, so one transaction may carry the
/// orders of many principals (a server's book writers). Any thread.
struct Actor {
    /// Which existing orders it may confirm, release, read or reserve again.
    enum class Reach {
        AnyOrder,  ///< every order: people and programs that open the book, the server's own work
        OwnOrders, ///< only those it created (the order's created_by is its name): a storefront's token
    };
    /// A person or service account (`--operator`, default the OS user), or a server's bearer token.
    QString operatorName;
    QString source;       ///< the program: cli, console, drill, expire, reconcile, `server@HOST`, ...
    Reach reach = Reach::AnyOrder;

    /// Whether it may touch an order created by `createdBy` (empty: an order whose creator
    /// the book did not record, which belongs to no one).
    bool reaches(const QString &createdBy) const
    {
        return reach == Reach::AnyOrder || (!createdBy.isEmpty() && createdBy == operatorName);
    }
};

/// One line of an order: `qty` units of `sku`. `token` is the gate's pre-deduct id for it
/// (empty when no gate is in front, i.e. book-only).
struct OrderLine {
    QString sku;
    qint64 qty = 0;
    QString token;
};

/// Stock levels of one bucket, in units. I1: all >= 0 and available + locked + sold = total.
struct BucketLevels {
    int bucket = 0;
    qint64 available = 0;
    qint64 locked = 0;
    qint64 sold = 0;
    qint64 total = 0;
};

/// One bucket's three moving levels (units), as found or as what its ledger explains.
struct Levels3 {
    qint64 available = 0;
    qint64 locked = 0;
    qint64 sold = 0;
    qint64 total() const { return available + locked + sold; }
    /// No level below zero (the first half of I1).
    bool valid() const { return available >= 0 && locked >= 0 && sold >= 0; }
    bool operator==(const Levels3 &) const = default;
};

/// `available/locked/sold`, e.g. `7/2/1`, for people.
QString levelsText(const Levels3 &levels);

/// A SKU's levels in the book: the sum over its buckets, and each bucket.
struct SkuLevels {
    QString sku;
    qint64 available = 0;
    qint64 locked = 0;
    qint64 sold = 0;
    qint64 total = 0;
    QList<BucketLevels> buckets;
};

/// Order status; changed only by compare-and-set on (status, version).
enum class OrderStatus { Pending, Paid, Closed, Abandoned };

/// `PENDING`, `PAID`, `CLOSED`, `ABANDONED`: the word the book stores.
QString orderStatusName(OrderStatus status);
/// The status named `name` (as orderStatusName), or nullopt.
std::optional<OrderStatus> orderStatusFromName(const QString &name);

/// One row of the ledger: one stock movement of one bucket.
struct LedgerRow {
    qint64 id = 0;
    QString order;       ///< order id, or `adj:<id>` for an adjustment
    QString operation;   ///< RESERVE, CONFIRM, RELEASE or ADJUST
    QString sku;
    int bucket = 0;
    QString token;
    qint64 deltaAvailable = 0;
    qint64 deltaLocked = 0;
    qint64 deltaSold = 0;
    BucketLevels before;
    BucketLevels after;
    qint64 atMs = 0;     ///< database clock, ms since the epoch
    QString operatorName;
    QString source;
    // An ADJUST row's adjustment (empty and 0 for order operations):
    QString adjustmentKind;     ///< initial, restock, stocktake, correction, rebalance
    qint64 adjustmentUnits = 0; ///< available units it moved (an approved restore's, though its row's deltas are 0)
    QString reason;             ///< why, as given
    qint64 discrepancy = 0;     ///< the discrepancy an approved correction resolves (0: none)
};

/// An ADJUST row's adjustment for people, printable: `correction +4 (discrepancy #3):
/// REASON`; empty for order operations.
QString adjustmentText(const LedgerRow &row);

/// What a reserve answered. `tokens` holds one token per line that has one.
struct ReserveResult {
    Outcome outcome = Outcome::OutOfStock;
    QString order;
    QList<OrderLine> lines;   ///< the lines as the book holds them (reserved) or as asked
    QString shortSku;         ///< out_of_stock: the first SKU that could not be served
    qint64 expiresAtMs = 0;   ///< reserved: when the hold expires (database clock)
    /// The asked lines' gate tokens that an order of this id already holds (two attempts
    /// of one id met at the gate, and the other booked first): that order's, so the engine
    /// never gives them back for this attempt. Never shown to the caller.
    QStringList heldTokens{};
};

/// What a confirm or release answered. `lines` are the order's lines (with tokens), so the
/// caller can tell the gate which tokens were sold or released.
struct OrderChange {
    Outcome outcome = Outcome::Duplicate;
    QString order;
    QList<OrderLine> lines;
};

/// An order as the book holds it: one line per SKU (its buckets summed) with the gate token.
struct OrderView {
    QString order;
    QString user;             ///< empty when the reserve named none
    OrderStatus status = OrderStatus::Pending;
    QList<OrderLine> lines;   ///< by SKU
    qint64 createdAtMs = 0;   ///< database clock
    qint64 expiresAtMs = 0;   ///< when the hold expires (PENDING), or expired
    QString paymentRef;       ///< PAID: the payment that captured it
    QString closeReason;      ///< CLOSED: timeout, cancel or risk
    QString createdBy;        ///< who created it (Actor::operatorName); empty if the book did not record it
};

/// A payment that reached an order it could no longer pay (one per order and payment).
struct Refund {
    QString order;
    QString payment;          ///< the payment reference to give back
    QString reason;           ///< why: order closed, order already paid, an approved correction
    qint64 atMs = 0;          ///< database clock
    QString operatorName;     ///< who recorded it (Actor); empty if the book did not record it
    QString source;           ///< from which program (Actor::source)
};

/// A stock adjustment that was applied (restock, stocktake, approved correction).
struct Adjustment {
    qint64 id = 0;
    QString sku;
    qint64 units = 0;         ///< added to available (negative takes away)
};

} // namespace flashstock

namespace flashstock {

/// Status of a flash sale: created (not yet taking reserves), open, paused (closed for
/// now; `sale start` resumes it), or stopped (final).
enum class SaleStatus { Scheduled, Open, Paused, Stopped };

QString saleStatusName(SaleStatus status);

/// A flash sale of one SKU's stock. While a SKU has a sale, the latest sale's window, hold
/// and per-user limit apply to its reserves, and a reserve must name its user.
struct Sale {
    qint64 id = 0;
    QString sku;
    SaleStatus status = SaleStatus::Scheduled;
    qint64 startMs = 0;       ///< ms since the epoch; 0 = opens when started
    qint64 endMs = 0;         ///< ms since the epoch; 0 = open until stopped
    qint64 holdSeconds = kDefaultHoldSeconds;
    qint64 perUserLimit = 0;  ///< units per user; 0 = no limit
    bool bookOnly = false;    ///< reserves skip the gate (operator's switch while Redis is down)
    qint64 units = 0;         ///< the SKU's available units when the sale was created
    qint64 createdAtMs = 0;

    /// Open and inside its window at `nowMs`.
    bool isSelling(qint64 nowMs) const
    {
        return status == SaleStatus::Open && (startMs == 0 || nowMs >= startMs) && (endMs == 0 || nowMs < endMs);
    }
};

} // namespace flashstock
