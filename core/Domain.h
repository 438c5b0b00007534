#pragma once

#include "Outcome.h"

#include <QList>
#include <QString>

namespace flashstock {

/// Default hold of a reservation when no sale says otherwise, in seconds.
inline constexpr qint64 kDefaultHoldSeconds = 900;

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

QString orderStatusName(OrderStatus status);

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
};

/// What a reserve answered. `tokens` holds one token per line that has one.
struct ReserveResult {
    Outcome outcome = Outcome::OutOfStock;
    QString order;
    QList<OrderLine> lines;   ///< the lines as the book holds them (reserved) or as asked
    QString shortSku;         ///< out_of_stock: the first SKU that could not be served
    qint64 expiresAtMs = 0;   ///< reserved: when the hold expires (database clock)
};

/// What a confirm or release answered. `lines` are the order's lines (with tokens), so the
/// caller can tell the gate which tokens were sold or released.
struct OrderChange {
    Outcome outcome = Outcome::Duplicate;
    QString order;
    QList<OrderLine> lines;
};

/// A stock adjustment that was applied (restock, stocktake, approved correction).
struct Adjustment {
    qint64 id = 0;
    QString sku;
    qint64 units = 0;         ///< added to available (negative takes away)
};

} // namespace flashstock
