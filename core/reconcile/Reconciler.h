#pragma once

#include "Result.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace flashstock {

class Engine;
class DiscrepancyStore;
struct DiscrepancyRow;

/// The kinds of discrepancy one reconcile pass can find (DESIGN.md, reconciliation).
enum class DiscrepancyKind {
    OrphanPreDeduct,     ///< a held gate token with no order in the book after the grace period
    StaleHold,           ///< the order is closed (or paid) in the book, the gate still holds its token
    GateShortfall,       ///< gate available below the book's, nothing in flight
    GateExcess,          ///< gate available above the book's
    BrokenBucket,        ///< I1: a bucket below zero or not summing to total
    LedgerMismatch,      ///< I2: a bucket differs from what its ledger replays to
    OrderLedgerMismatch, ///< I3/I4: locked or sold differ from the orders and their ledger rows
    UnrefundedPayment,   ///< I6: a payment on a closed order without its refund record
};

/// `orphan_pre_deduct`, `stale_hold`, `gate_shortfall`, `gate_excess`, `broken_bucket`,
/// `ledger_mismatch`, `order_ledger_mismatch`, `unrefunded_payment`.
QString discrepancyKindName(DiscrepancyKind kind);
/// The kind named `name` (as discrepancyKindName), or nullopt.
std::optional<DiscrepancyKind> discrepancyKindFromName(const QString &name);

/// `auto_fixed` (the gate was healed), `pending_approval` (the book waits for a person),
/// `approved`, `rejected`.
enum class DiscrepancyStatus { AutoFixed, PendingApproval, Approved, Rejected };
QString discrepancyStatusName(DiscrepancyStatus status);
/// The status named `name` (as discrepancyStatusName), or nullopt.
std::optional<DiscrepancyStatus> discrepancyStatusFromName(const QString &name);

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
    QString proposal;         ///< pending: what approval will change, for people
    QString correction;       ///< the proposed correction: `restore` (to what the ledger explains),
                              ///< `stocktake` (accept the counted figure), `order_status:FROM->TO`,
                              ///< `refund:PAYMENT`; empty for gate heals
    QString detail;           ///< what was found and what was done
    qint64 detectedAtMs = 0;
    QString resolvedBy;       ///< approver (approved or rejected)
    QString reason;           ///< approver's reason
};

/// What one pass found and did.
struct ReconcileReport {
    QList<Discrepancy> discrepancies; ///< new this pass (auto_fixed and pending_approval)
    int autoFixed = 0;
    int pendingApproval = 0;          ///< new this pass
    int stillPending = 0;             ///< all discrepancies waiting for a person after the pass
    QStringList warnings;             ///< trouble that did not stop the pass (e.g. gate unreachable)
};

/// The reconciler: compares gate, book, ledger and orders, heals the gate by itself and
/// holds disagreements of the book for an operator's approval. Uses the engine's book and
/// gate; same thread affinity as the Engine.
class Reconciler {
public:
    explicit Reconciler(Engine &engine);
    ~Reconciler();

    /// One pass. `graceMs`: how old a held token must be, by Redis time, before it counts
    /// as orphaned. Idempotent: a second pass over an unchanged state finds nothing new.
    [[nodiscard]] Result<ReconcileReport> runPass(qint64 graceMs = 30000);

    /// Discrepancies, newest first; `status` filters when set.
    [[nodiscard]] Result<QList<Discrepancy>> list(std::optional<DiscrepancyStatus> status = std::nullopt);
    /// Pending discrepancies whose alert was not delivered yet (see DiscrepancyStore::unalerted).
    [[nodiscard]] Result<QList<Discrepancy>> unalerted();
    /// See DiscrepancyStore::claimAlert.
    [[nodiscard]] Result<bool> claimAlert(qint64 id, qint64 leaseMs);
    /// See DiscrepancyStore::finishAlert.
    [[nodiscard]] Result<void> finishAlert(qint64 id, bool delivered);
    /// One discrepancy; InvalidArgument naming `id` if unknown.
    [[nodiscard]] Result<Discrepancy> get(qint64 id);
    /// Applies a pending correction once (re-checked first if the SKU moved), as a ledgered
    /// adjustment naming `approver`. NotPermitted unless `approver` is in `approvers`.
    [[nodiscard]] Result<Discrepancy> approve(qint64 id, const QString &approver, const QString &reason,
                                              const QStringList &approvers);
    /// Closes a pending discrepancy without changing stock. NotPermitted as approve.
    [[nodiscard]] Result<Discrepancy> reject(qint64 id, const QString &approver, const QString &reason,
                                             const QStringList &approvers);

    /// Ledger rows younger than this (ms, database clock) stay in the window of the next pass
    /// too, so a slow transaction that got a lower id is never skipped. Default 5000.
    void setWatermarkLagMs(qint64 lagMs) { m_lagMs = lagMs; }

private:
    void healGate(const QString &sku, qint64 nowMs, qint64 graceMs, bool paused, ReconcileReport &report);
    void checkBook(ReconcileReport &report, QList<Error> &errors);
    bool record(const DiscrepancyRow &row, ReconcileReport &report);
    void afterResolve(const Discrepancy &d);

    Engine &m_engine;
    std::unique_ptr<DiscrepancyStore> m_store;
    qint64 m_lagMs = 5000;
};

} // namespace flashstock
