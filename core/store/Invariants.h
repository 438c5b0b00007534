#pragma once

#include "Domain.h"
#include "Invariant.h"
#include "Result.h"
#include "store/LedgerWindow.h"

#include <QList>
#include <QSet>
#include <QString>
#include <QStringList>

#include <optional>

namespace flashstock {

class Database;

/// A bucket that breaks I1, I2 or I4.
struct BucketFinding {
    QString sku;
    int bucket = 0;
    Levels3 found;          ///< the bucket's levels
    qint64 total = 0;       ///< its stored total
    Levels3 ledger;         ///< what its ledger replays to (I2)
    qint64 ordersLocked = 0; ///< units its PENDING order lines hold (I4)
    qint64 ordersSold = 0;   ///< units its PAID order lines hold (I4)
    Invariants breaks;      ///< which of I1, I2, I4
};

/// An order line whose status is not what its ledger rows explain (I3): exactly one RESERVE
/// of its qty, then nothing (PENDING), one CONFIRM of it (PAID) or one RELEASE of it (CLOSED).
struct OrderLineFinding {
    QString order;
    QString sku;
    int bucket = 0;
    qint64 qty = 0;
    OrderStatus status = OrderStatus::Pending;
    std::optional<OrderStatus> explained; ///< what its rows explain; nullopt: no valid history
    QString token;
    int reserves = 0;                     ///< its RESERVE, CONFIRM and RELEASE rows
    int confirms = 0;
    int releases = 0;
};

/// A ledger row of an order operation that matches no order line (I3).
struct StrayLedgerRow {
    QString order;
    QString operation;
    QString sku;
    int bucket = 0;
};

/// A payment and the refunds disagreeing (I6).
struct PaymentFinding {
    QString order;
    QString sku;     ///< the order's first SKU (empty if it has no line)
    QString payment;
    OrderStatus status = OrderStatus::Closed;
    bool refunded = false; ///< false: a payment on a CLOSED order without its refund record;
                           ///< true: a refund record of a payment the order took (PAID with it) or can still take (PENDING)
};

/// How a check read the order lines of its window (checkInvariants): what bounds its memory.
struct LineScan {
    qint64 lines = 0; ///< order lines checked
    int batches = 0;  ///< statements that read them
    int mostHeld = 0; ///< the most line rows held at once: never more than the batch
};

/// What the checks of I1-I4 and I6 found over one ledger window (checkInvariants).
struct BookCheck {
    QList<BucketFinding> buckets;      ///< I1, I2, I4
    QList<OrderLineFinding> lines;     ///< I3
    QList<StrayLedgerRow> strayRows;   ///< I3
    QList<PaymentFinding> payments;    ///< I6
    LineScan scan;                     ///< how the order lines were read (not a finding)
    /// The last ledger id when the check began: every order first seen up to it was
    /// checked, so a watermark may pass up to it and no further (LedgerWatermark::advance).
    qint64 checkedThrough = 0;

    /// True unless a finding breaks `invariant` (I5, the gate's, always holds here).
    bool holds(Invariant invariant) const;
    /// I1-I4 and I6 all hold.
    bool ok() const;
    /// One line per violation, for people (`I2: A bucket 0 is ...`).
    QStringList problems() const;
    /// Every violation, named as InvariantBreach::at names it.
    QSet<InvariantBreach> breaches() const;
    /// The findings of `sku` only (a payment finding by its order's first SKU): what a
    /// rehearsal of that SKU answers for, whatever other SKUs' histories hold.
    BookCheck ofSku(const QString &sku) const;
};

/// Order lines a check reads per statement (checkInvariants): at about 0.5 kB each, what a
/// pass holds of them at once, however long its window.
inline constexpr int kLinesPerCheckBatch = 5000;

/// THE definition of the book's invariants I1-I4 and I6 (DESIGN.md), as SQL aggregates over
/// `window`, used by Book::check (the whole ledger: drill and tests) and by each reconcile
/// pass (the rows after its watermark), so the two cannot disagree. Over the whole ledger
/// every bucket, order and refund is checked. Over a reconciler's window:
/// - I1 and I2: every bucket (a catalog-sized table) against its checkpoint plus the window;
/// - I3 and I6: the orders with rows in the window (stray rows: those in the window);
/// - I4: every bucket, its orders' side taken as the replay less what adjustments moved,
///   corrected by each order line of the window whose status is not what its rows net to;
///   order lines outside the window count as last checked (an order changes only with a
///   ledger row).
/// So a pass reads the window, its orders' rows (by order id) and the catalog, never a whole
/// ledger, order or refund table. The order lines are read `linesPerBatch` at a time in key
/// order (BookCheck::scan; a window in ranges of as many ledger ids, each order in the range
/// of its first row there), so memory is bounded by the batch and the findings, not the
/// window, and time by the window once; the default is the production one, tests pass a
/// small one. Each figure comes from one statement (one snapshot), each order line with its
/// status and its rows from one batch, and a transaction committing between two statements
/// moves no finding (a window's orders first seen after its last row when the check began
/// are the next pass's).
/// InvalidArgument if `linesPerBatch` < 1. Thread affinity: that of `db`.
[[nodiscard]] Result<BookCheck> checkInvariants(Database &db, const LedgerWindow &window,
                                                int linesPerBatch = kLinesPerCheckBatch);

} // namespace flashstock
