#pragma once

#include "Domain.h"
#include "EngineWarning.h"
#include "Expiry.h"
#include "drill/DrillOptions.h"
#include "gate/GateHealth.h"
#include "open/EngineProfile.h"
#include "reconcile/Reconciler.h"
#include "store/ApproverStore.h"
#include "store/BookReplication.h"

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <optional>

namespace flashstock {

/// What the worker found when it opened (or failed to open) the engine.
struct ConnectionInfo {
    bool bookOpen = false;   ///< the book of record is open; the console is usable
    QString bookDisplay;     ///< the book's URL, password hidden
    QString gateDisplay;     ///< the gate's URL, `none`, or why the embedded one failed
    bool gateConfigured = false;
    bool reconcilerAvailable = false; ///< this build has the reconciler
    QString error;           ///< why the book could not be opened
    /// What happened to the embedded redis-server the console had started for the connection
    /// before, when this one does not use it (stopped, or left running and why); empty otherwise.
    QString previousGate;
};

/// Health of both tiers, measured by one sample.
struct HealthSnapshot {
    bool bookUp = false;
    qint64 bookRoundTripUs = 0; ///< one small book query, microseconds
    QString bookDetail;         ///< why down
    bool gateConfigured = false;
    bool gateUp = false;
    bool gateScriptsLoaded = false;
    qint64 gateRoundTripUs = 0; ///< one PING, microseconds
    QString gateDetail;         ///< why down or degraded
    QList<GateNodeHealth> gateNodes; ///< per node: the one server, or each master and replica of a cluster
    std::optional<BookReplication> bookReplication; ///< a PostgreSQL book's primary and its commits; nullopt: SQLite or unread
};

/// One SKU at one sample: book levels and the gate's available.
struct SkuSample {
    QString sku;
    qint64 available = 0; ///< book, units
    qint64 locked = 0;
    qint64 sold = 0;
    qint64 total = 0;
    int buckets = 1;
    qint64 gateAvailable = -1; ///< units; -1 = no gate, unreachable or key absent
    qint64 gateReserved = -1;  ///< the gate's reserve counter (calls); -1 = no gate figure
    qint64 gateRefused = -1;   ///< the gate's refusal counter (calls, the book's refusals behind
                               ///< the gate included); -1 = no gate figure
    QList<BucketLevels> bucketLevels{}; ///< book, each bucket
    std::optional<Sale> sale{};  ///< the SKU's latest sale, which governs its reserves; nullopt: none
    QList<qint64> pausedBy{};    ///< pending discrepancies that pause the SKU (its reserves answer `paused`)
    OverdueHolds overdue{};      ///< its holds past their expiry
};

/// Rates of one SKU over the last second, and the highest in the chart's window
/// (LiveView::rates()).
struct SkuRates {
    double taken = 0;    ///< units per second leaving book available (net of releases)
    double refused = -1; ///< refused reserves per second, as the gate counts them; -1 = not
                         ///< counted (book-only, or the gate did not answer)
    double takenPeak = 0;    ///< the highest `taken` in the window, units per second
    qint64 takenPeakAtMs = 0; ///< when it was measured (the console's clock); 0: no peak yet
    double refusedPeak = 0;   ///< the highest `refused` in the window, per second
    qint64 refusedPeakAtMs = 0;
};

/// One 1 s sample of everything the live and sales views show.
struct LiveSnapshot {
    qint64 atMs = 0; ///< the console's clock when the sample was taken
    HealthSnapshot health;
    QList<SkuSample> skus;
    QList<Sale> sales;
    std::optional<ExpiryStatus> expiry; ///< holds past expiry and the expirers; nullopt: unreadable
};

/// A change of a SKU's stock or buckets the operator asked for (SKU view, launch wizard).
struct SkuChange {
    enum class Kind { Add, Restock, Buckets, Rebalance };
    Kind kind = Kind::Restock;
    QString sku;
    qint64 units = 0;  ///< Add: initial stock; Restock: units added; Rebalance: units moved
    int buckets = 1;   ///< Add: bucket count; Buckets: the new count
    int from = 0;      ///< Rebalance: bucket taken from
    int to = 0;        ///< Rebalance: bucket given to
    QString reason;    ///< Restock: why, for the ledger (required)
};

/// What one release of expired holds did (the console's own expirer, or the operator's
/// "Release expired holds now").
struct ExpiryRun {
    bool manual = false;  ///< the operator asked for it now
    qint64 orders = 0;    ///< orders released
    qint64 units = 0;     ///< units back to available
    QString problem;      ///< not empty: the pass (or its heartbeat) failed, and why
};

/// One check of the launch pre-flight list.
struct PreflightItem {
    QString label;  ///< what was checked, for people
    bool ok = false;
    bool blocking = true; ///< a failed blocking item keeps Start disabled
};

/// What the pre-flight of a launch found: what the launch WILL do, and what keeps it from it.
struct PreflightResult {
    QString sku;
    bool skuExists = false;
    qint64 bookAvailable = 0; ///< units available in the book now (0 for a new SKU): the sale's units
    qint64 bookTotal = 0;     ///< the SKU's total units in the book now (0 for a new SKU)
    QList<PreflightItem> items;
    bool ok() const
    {
        for (const auto &item : items)
            if (item.blocking && !item.ok)
                return false;
        return !items.isEmpty();
    }
};

/// The launch wizard's answers. A launch never changes the stock of an existing SKU: its
/// sale offers what the book has available (a restock is its own step, SkuChange).
struct SaleRequest {
    QString sku;
    qint64 units = 0;        ///< only for a new SKU: it is created with this stock
    int buckets = 1;         ///< only for a new SKU
    qint64 startMs = 0;      ///< 0 = now
    qint64 endMs = 0;        ///< 0 = until stopped
    qint64 holdSeconds = 120;
    qint64 perUserLimit = 1; ///< 0 = none
    bool start = true;       ///< open it right away
};

/// How the ledger is searched; Recent: the newest rows of every SKU (no search text).
enum class LedgerSearchMode { Recent, Order, Token, Sku };

/// One ledger search answered.
struct LedgerSearchResult {
    LedgerSearchMode mode = LedgerSearchMode::Order;
    QString text;
    QList<LedgerRow> rows;
    /// For an order search: the order as the book holds it (what GET /v1/orders/{order}
    /// shows: status, buyer, lines with their tokens, times, payment); nullopt if unknown.
    std::optional<OrderView> order{};
    int refunds = 0;     ///< for an order search: refund records
    QString error;
};

/// Where a console drill runs.
enum class DrillTarget {
    Scratch, ///< a temporary data dir with its own book and embedded redis-server, removed afterwards
    Console, ///< the console's own book and gate (refused while a sale is open there: checkDrillTarget)
};

/// The drill view's answers: the drill's parameters (their defaults and ranges are
/// DrillParameters'), where it runs, the SKU and the faults; the runner fills in book and gate.
struct DrillRequest : DrillParameters {
    DrillTarget target = DrillTarget::Scratch;
    QString sku;             ///< a new SKU; the drill creates it
    QString faults = DrillParameters::defaultFaults(); ///< `all`, `none` or `NAME[=RATE],...`
};

/// Who may decide discrepancies (the book's approver policy) and whether the console's
/// operator is one of them.
struct ApproverView {
    ApproverPolicy policy;
    QString operatorName;    ///< the console's (asserted) operator
    bool operatorMayApprove = false;
};

/// A drill that ran (report) or could not run (error).
struct DrillOutcome {
    QString sku;
    QString target;      ///< where it ran, for people (scratch, or the console's book and gate)
    bool ran = false;    ///< false: `error` says why the drill could not run
    bool passed = false;
    bool cancelled = false; ///< the operator stopped it early (wound down, not passed)
    QString reportText;  ///< DrillReport::toText()
    QString reportJson;  ///< DrillReport::toJson(), indented
    QString error;
    double seconds = 0;
};

} // namespace flashstock

Q_DECLARE_METATYPE(flashstock::EngineProfile)
Q_DECLARE_METATYPE(flashstock::EngineWarning)
Q_DECLARE_METATYPE(flashstock::ConnectionInfo)
Q_DECLARE_METATYPE(flashstock::LiveSnapshot)
Q_DECLARE_METATYPE(flashstock::PreflightResult)
Q_DECLARE_METATYPE(flashstock::SaleRequest)
Q_DECLARE_METATYPE(flashstock::LedgerSearchResult)
Q_DECLARE_METATYPE(flashstock::Discrepancy)
Q_DECLARE_METATYPE(flashstock::ApproverView)
Q_DECLARE_METATYPE(flashstock::Sale)
Q_DECLARE_METATYPE(flashstock::DrillRequest)
Q_DECLARE_METATYPE(flashstock::DrillOutcome)
Q_DECLARE_METATYPE(flashstock::DrillProgress)
Q_DECLARE_METATYPE(flashstock::SkuChange)
Q_DECLARE_METATYPE(flashstock::ExpiryRun)
