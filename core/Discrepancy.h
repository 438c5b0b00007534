#pragma once

#include "Domain.h"
#include "Invariant.h"

#include <QList>
#include <QString>

#include <optional>
#include <variant>

namespace flashstock {

/// The kinds of discrepancy one reconcile pass can find (DESIGN.md, reconciliation).
enum class DiscrepancyKind {
    OrphanPreDeduct,     ///< a held gate token with no order in the book after the grace period
    StaleHold,           ///< the order is closed (or paid) in the book, the gate still holds its token
    GateShortfall,       ///< gate available below the book's, nothing in flight
    GateExcess,          ///< gate available above the book's
    BrokenBucket,        ///< I1: a bucket below zero or not summing to total
    LedgerMismatch,      ///< I2: a bucket differs from what its ledger replays to
    OrderLedgerMismatch, ///< I3/I4: an order's status, its lines and its ledger rows disagree, or
                         ///< a bucket's locked or sold differ from its orders
    StrayRefund,         ///< I6: a refund record for a payment the order took or can still take
    UnrefundedPayment,   ///< I6: a payment on a closed order without its refund record
};

/// `orphan_pre_deduct`, `stale_hold`, `gate_shortfall`, `gate_excess`, `broken_bucket`,
/// `ledger_mismatch`, `order_ledger_mismatch`, `stray_refund`, `unrefunded_payment`.
QString discrepancyKindName(DiscrepancyKind kind);
/// The kind named `name` (as discrepancyKindName), or nullopt.
std::optional<DiscrepancyKind> discrepancyKindFromName(const QString &name);

/// `auto_fixed` (the gate was healed), `pending_approval` (the book waits for a person),
/// `approved`, `rejected`.
enum class DiscrepancyStatus { AutoFixed, PendingApproval, Approved, Rejected };
QString discrepancyStatusName(DiscrepancyStatus status);
/// The status named `name` (as discrepancyStatusName), or nullopt.
std::optional<DiscrepancyStatus> discrepancyStatusFromName(const QString &name);

/// The level a discrepancy's gate, book and ledger figures count (Discrepancy::figure).
enum class DiscrepancyFigure {
    None,          ///< no figures (a gate token's heal), or found before the book kept it
    Available,     ///< a bucket's or SKU's available units
    Locked,        ///< a bucket's locked units
    Sold,          ///< a bucket's sold units
    OrderLocked,   ///< the units an order holds locked: by its status (book) and its ledger rows
    LedgerRows,    ///< ledger rows of one order operation
    RefundRecords, ///< refund records of one payment
};
/// `""`, `available`, `locked`, `sold`, `order_locked`, `ledger_rows`, `refund_records`.
QString discrepancyFigureName(DiscrepancyFigure figure);
/// The figure named `name` (as discrepancyFigureName); None for a word this binary does not know.
DiscrepancyFigure discrepancyFigureFromName(const QString &name);

/// An operator's decision on a pending discrepancy.
enum class Decision {
    Approve, ///< apply its correction
    Reject,  ///< refuse its correction, stock untouched; a bucket that still disagrees with its
             ///< ledger keeps the discrepancy open (see DiscrepancyStore::resolve)
};

/// Where a decision came from, as the operating system says (never the caller): the
/// effective OS user and the host. The database role is added by the book where it has one.
struct DecisionOrigin {
    QString osUser;
    QString host;
};

/// One recorded decision on a discrepancy (table `discrepancy_decisions`).
struct DecisionRecord {
    Decision decision = Decision::Approve;
    QString operatorName; ///< as asserted (`--operator`), checked against the book's approvers
    QString osUser;       ///< the effective OS user of the deciding process
    QString host;         ///< its host name
    QString dbRole;       ///< PostgreSQL: current_user of its connection; empty on SQLite
    QString reason;
    bool applied = false; ///< false: a first approval waiting for a second, different approver
    qint64 atMs = 0;      ///< database clock, ms since the epoch
};

/// Correction: restore the discrepancy's bucket to what its ledger explains.
struct RestoreBucket {
    Levels3 found;  ///< the bucket when the discrepancy was found
    Levels3 ledger; ///< what its ledger explained then: the levels approval sets
    bool operator==(const RestoreBucket &) const = default;
};
/// Correction: accept the counted (found) figure of the bucket as a stocktake adjustment.
struct AcceptStocktake {
    Levels3 found;  ///< the bucket when found: the figure approval accepts
    Levels3 ledger; ///< what its ledger explained then
    bool operator==(const AcceptStocktake &) const = default;
};
/// Correction: set the discrepancy's order from one status to the one its ledger explains.
struct ChangeOrderStatus {
    OrderStatus from = OrderStatus::Pending;
    OrderStatus to = OrderStatus::Pending;
    bool operator==(const ChangeOrderStatus &) const = default;
};
/// Correction: record the refund of `payment` on the discrepancy's order.
struct RecordRefund {
    QString payment;
    bool operator==(const RecordRefund &) const = default;
};
/// What approving a discrepancy applies: nothing (std::monostate: gate heals, and book
/// findings with no safe correction, which are fixed by hand and rejected) or one of the
/// four corrections. Text only at the edges: correctionWord() for the book's column and
/// correctionText() for people and JSON.
using Correction = std::variant<std::monostate, RestoreBucket, AcceptStocktake, ChangeOrderStatus, RecordRefund>;

/// The correction's kind as the book stores it: empty, `restore`, `stocktake`,
/// `order_status` or `refund`.
QString correctionWord(const Correction &correction);
/// The correction for people and JSON: empty, `restore`, `stocktake`,
/// `order_status:FROM->TO` or `refund:PAYMENT`. Never parsed back.
QString correctionText(const Correction &correction);

/// What approving a bucket correction (RestoreBucket or AcceptStocktake) of `sku` bucket
/// `bucket` does, for people: the proposal the discrepancy shows. Empty for the others.
QString bucketProposal(const QString &sku, int bucket, const Correction &correction);

struct Discrepancy;
/// The size of `d`'s correction in units, for the four-eyes rule: for a bucket correction
/// the largest change of one level (available, locked or sold) between found and ledger;
/// otherwise |delta|.
qint64 correctionUnits(const Discrepancy &d);

/// One discrepancy as recorded in the book (table `discrepancies`).
struct Discrepancy {
    qint64 id = 0;
    DiscrepancyKind kind = DiscrepancyKind::GateExcess;
    QString sku;
    int bucket = -1;          ///< -1 when the whole SKU
    QString order;            ///< the order involved, if any
    QString token;            ///< the gate token involved, if any
    DiscrepancyStatus status = DiscrepancyStatus::AutoFixed;
    qint64 delta = 0;         ///< right value - value found, in units, for the figure the kind names
    qint64 gateValue = -1;    ///< units the gate showed (-1 n/a)
    qint64 bookValue = -1;    ///< units the book showed (-1 n/a)
    qint64 ledgerValue = -1;  ///< units the ledger explains (-1 n/a)
    DiscrepancyFigure figure = DiscrepancyFigure::None; ///< the level the three values count
    Invariants breaks;        ///< the invariants this finding breaks (none for gate token heals)
    QString proposal;         ///< pending: what approval will change, for people
    Correction correction;    ///< what approval applies
    QString detail;           ///< what was found and what was done
    qint64 detectedAtMs = 0;
    QString resolvedBy;       ///< approver (approved or rejected)
    qint64 resolvedAtMs = 0;  ///< when decided, ms since the epoch (database clock); 0 if not
    QString reason;           ///< approver's reason
    QList<DecisionRecord> decisions; ///< every decision, oldest first (filled by one-discrepancy reads)

    /// True while pending with a first approval recorded that waits for a second approver.
    bool awaitsSecondApprover() const;

    /// Each invariant in `breaks` at this discrepancy's SKU, bucket and order, named as the
    /// book's check names it (InvariantBreach::at).
    QList<InvariantBreach> breaches() const;
};

} // namespace flashstock
