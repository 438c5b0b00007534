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

/// The level a discrepancy's gate, book and ledger figures count (Discrepancy::level).
enum class DiscrepancyLevel {
    None,          ///< no figures (a gate token's heal), or found before the book kept it
    Available,     ///< a bucket's or SKU's available units
    Locked,        ///< a bucket's locked units
    Sold,          ///< a bucket's sold units
    OrderLocked,   ///< the units an order holds locked: by its status (book) and its ledger rows
    LedgerRows,    ///< ledger rows of one order operation
    RefundRecords, ///< refund records of one payment
};
/// `""`, `available`, `locked`, `sold`, `order_locked`, `ledger_rows`, `refund_records`.
QString discrepancyLevelName(DiscrepancyLevel level);
/// The level named `name` (as discrepancyLevelName); None for a word this binary does not know.
DiscrepancyLevel discrepancyLevelFromName(const QString &name);

/// An operator's decision on a pending discrepancy.
enum class Decision {
    Approve, ///< apply its correction
    Reject,  ///< refuse its correction, stock untouched; a finding that pauses its SKU and that
             ///< the book still shows stays open (see DiscrepancyStore::reject)
};

/// Where a decision came from, as the operating system says: the effective OS user and the
/// host (decisionOrigin()). The face that takes the decision fills it, never from what its
/// user typed. The database role is added by the book where it has one.
struct DecisionOrigin {
    QString osUser;
    QString host;
};

/// Who decides: the asserted operator (checked against the book's approvers) and where the
/// decision came from.
struct DecisionBy {
    QString operatorName;
    DecisionOrigin origin;
};

/// Who signed a decision, as far as the book can tell people apart.
struct Signer {
    QString operatorName; ///< as asserted
    QString osUser;       ///< the effective OS user of the deciding process
    QString host;         ///< its host name
    QString dbRole;       ///< PostgreSQL: current_user of its connection; empty on SQLite
};

/// THE rule that tells two signers of a four-eyes decision apart: they are one person if
/// they assert the same name, or if everything the system vouches for is the same (OS user,
/// host and database role): two names asserted from one account are one person.
bool samePerson(const Signer &a, const Signer &b);

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
    QString seen;         ///< the fingerprint of the proposal decided on (proposalFingerprint);
                          ///< empty for a rejection and for decisions of earlier releases

    Signer signer() const { return {operatorName, osUser, host, dbRole}; }
    bool operator==(const DecisionRecord &) const = default;
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
/// Correction: set the discrepancy's bucket to `target`, whose locked and sold are what its
/// orders hold, and ledger the difference to what its ledger explained (an adjustment moved
/// locked or sold away from the orders, or neither the bucket nor its ledger agrees with them).
struct MatchOrders {
    Levels3 found;  ///< the bucket when found
    Levels3 ledger; ///< what its ledger explained then
    Levels3 target; ///< the levels approval sets
    bool operator==(const MatchOrders &) const = default;
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
/// five corrections. Text only at the edges: correctionWord() for the book's column and
/// correctionText() for people and JSON.
using Correction =
    std::variant<std::monostate, RestoreBucket, AcceptStocktake, MatchOrders, ChangeOrderStatus, RecordRefund>;

/// The correction's kind as the book stores it: empty, `restore`, `stocktake`,
/// `match_orders`, `order_status` or `refund`.
QString correctionWord(const Correction &correction);
/// The correction for people and JSON: empty, `restore`, `stocktake`, `match_orders`,
/// `order_status:FROM->TO` or `refund:PAYMENT`. Never parsed back.
QString correctionText(const Correction &correction);

/// The levels that change from `from` to `to`, for people: `available +3, locked -3`
/// (empty if none does).
QString levelChangesText(const Levels3 &from, const Levels3 &to);

/// The level a bucket's drift from its ledger is named by: available, unless only locked or
/// sold differ; with the bucket's (found) and the ledger's figure at that level.
struct LevelDrift {
    DiscrepancyLevel level = DiscrepancyLevel::Available;
    qint64 found = 0;
    qint64 ledger = 0;
    qint64 delta() const { return ledger - found; } ///< what the ledger explains minus what is found
};
LevelDrift levelDrift(const Levels3 &found, const Levels3 &ledger);

/// What approving a bucket correction (RestoreBucket, AcceptStocktake or MatchOrders) of
/// `sku` bucket `bucket` does, for people: the proposal the discrepancy shows. Empty for the
/// others.
QString bucketProposal(const QString &sku, int bucket, const Correction &correction);

/// The bucket a correction sets or accepts: its levels when found and what its ledger
/// explained then, for RestoreBucket, AcceptStocktake and MatchOrders; nullopt otherwise.
struct BucketSeen {
    Levels3 found;
    Levels3 ledger;
    Levels3 target; ///< the levels the bucket and its ledger agree on once it is applied
};
std::optional<BucketSeen> bucketSeen(const Correction &correction);

/// What a bucket finding saw: the figures its corrections are chosen from (units).
struct BucketFigures {
    Levels3 found;           ///< the bucket's levels
    qint64 total = 0;        ///< its stored total
    Levels3 ledger;          ///< what its ledger replays to
    qint64 ordersLocked = 0; ///< what its PENDING order lines hold; -1 unknown
    qint64 ordersSold = 0;   ///< what its PAID order lines hold; -1 unknown

    /// I1, I2 and I4 hold for the bucket (I4 only as far as the orders are known).
    bool agree() const;
    bool operator==(const BucketFigures &) const = default;
};

/// THE rule of which corrections a bucket finding may propose, most preferred first: restore
/// the bucket to what its ledger explains, accept the count as a stocktake; each only if what
/// it leaves is a valid bucket whose locked and sold are what the orders hold (a locked or
/// sold figure the orders contradict is never proposed). Only when neither applies: set
/// locked and sold to what the orders hold (MatchOrders), keeping the total of the ledger
/// (else of the bucket) if the rest stays available, else keeping its available. Orders
/// unknown (ordersLocked < 0: a finding of an earlier release) are not checked and offer no
/// MatchOrders. Empty when none applies (the stock must be counted and set by hand).
QList<Correction> bucketCorrections(const BucketFigures &figures);
/// The proposal of a bucket finding that no correction applies to, for people.
QString noBucketCorrection();

/// A short fingerprint (12 hex digits) of what approving discrepancy `id` with `correction`
/// applies: the id, the correction's kind and every figure it names. `discrepancy show`
/// prints it; an approval names it (`--seen`) and is refused if the proposal is another.
QString proposalFingerprint(qint64 id, const Correction &correction);

struct Discrepancy;
/// The size of `d`'s correction in units, for the four-eyes rule: what approving it applies.
/// For a bucket correction the largest change of one level (available, locked or sold) that
/// it makes to the bucket or to what its ledger explains; otherwise |delta|.
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
    qint64 delta = 0;         ///< right value - value found, in units of `level`
    qint64 gateValue = -1;    ///< units the gate showed (-1 n/a)
    qint64 bookValue = -1;    ///< units the book showed (-1 n/a)
    qint64 ledgerValue = -1;  ///< units the ledger explains (-1 n/a)
    DiscrepancyLevel level = DiscrepancyLevel::None; ///< what the three values count
    Invariants breaks;        ///< the invariants this finding breaks (none for gate token heals)
    QString proposal;         ///< pending: what approval will change, for people
    Correction correction;    ///< what approval applies
    QString detail;           ///< what was found and what was done
    qint64 detectedAtMs = 0;
    QString resolvedBy;       ///< approver (approved or rejected)
    qint64 resolvedAtMs = 0;  ///< when decided, ms since the epoch (database clock); 0 if not
    QString reason;           ///< approver's reason
    /// A finding about a bucket (I1, I2, I4): what was found, as its proposal was made on it.
    std::optional<BucketFigures> figures;
    QList<DecisionRecord> decisions; ///< every decision, oldest first

    /// The fingerprint of its proposal (proposalFingerprint).
    QString fingerprint() const;
    /// While pending: the first of two approvals it waits on (the last decision, an approval
    /// that applied nothing, made on the proposal as it stands now); nullptr otherwise.
    const DecisionRecord *firstApproval() const;
    /// True while pending with a first approval recorded that waits for a second approver.
    bool awaitsSecondApprover() const { return firstApproval() != nullptr; }
    /// Who decided it: approved, the approver who applied it and the first of two before it
    /// (oldest first); rejected, resolvedBy; empty while it waits or was healed.
    QStringList resolvers() const;

    /// Each invariant in `breaks` at this discrepancy's SKU, bucket and order, named as the
    /// book's check names it (InvariantBreach::at).
    QList<InvariantBreach> breaches() const;
    bool operator==(const Discrepancy &) const = default;
};

} // namespace flashstock
