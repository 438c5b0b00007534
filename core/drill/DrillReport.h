#pragma once

#include "drill/DrillOptions.h"
#include "store/Book.h"

#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

namespace flashstock {

/// One fault kind's account: how often it was scheduled, fired, and undone or accounted for.
struct FaultTally {
    qint64 scheduled = 0; ///< requests (or events) the schedule put it on
    qint64 injected = 0;  ///< times it really fired (e.g. crash-after-gate only when the gate reserved)
    qint64 healed = 0;    ///< of those, whose effect was undone or accounted for (see Drill)
    QStringList unhealed; ///< orders, tokens or events not healed, for people (first few)
    QString note;         ///< how it was injected when that matters (e.g. external Redis)
};

/// What the reconciler did to reach quiescence.
struct QuiesceSummary {
    int passes = 0;                    ///< passes run (the last found nothing new)
    bool quiet = false;                ///< a pass found nothing new before the pass limit
    QMap<QString, qint64> byKind;      ///< discrepancies found, by kind name, over all passes
    qint64 autoFixed = 0;
    qint64 pendingApproval = 0;        ///< new ones waiting for a person
    qint64 stillPending = 0;           ///< all waiting for a person after the last pass
};

/// The report of one drill. Everything under "after" is read from the book and the gate
/// themselves, not from the drill's counters (which are reported beside them).
struct DrillReport {
    // what ran
    QString sku;
    qint64 stock = 0;
    qint64 buyers = 0;
    int concurrency = 0;
    double payRatio = 0;
    qint64 holdSeconds = 0;
    quint64 seed = 0;
    QString book;          ///< the book's URL (password masked)
    QString gate;          ///< the gate's URL, or "none"
    QString via;           ///< `drill --via`: the server's URL the buyers went to; empty in process
    QString scheduleDigest;

    // the drill's counters
    QMap<QString, qint64> reserveOutcomes; ///< answers to buyers' reserves by result word
    QMap<QString, qint64> paymentOutcomes; ///< answers to payment deliveries by result word
    qint64 reservedUnits = 0;              ///< reserve answers `reserved`
    qint64 paidUnits = 0;                  ///< confirm answers `paid`
    double saleSeconds = 0;
    double totalSeconds = 0;
    double throughputPerS = 0;             ///< buyers answered per second of the sale
    double unitsPerS = 0;                  ///< units reserved per second of the sale
    double p50Ms = 0;                      ///< reserve latency (each engine call)
    double p99Ms = 0;
    qint64 gateWarnings = 0;               ///< gate trouble the engines left for the reconciler
    qint64 bookBatches = 0;                ///< transactions the book writers ran during the sale
    qint64 bookOrders = 0;                 ///< orders (reserve, confirm, release) they answered
    int largestBookBatch = 0;              ///< the largest of those transactions, in orders

    // after quiescence, from the book and the gate
    qint64 sold = 0;           ///< book sold of the SKU
    qint64 bookAvailable = 0;
    qint64 bookLocked = 0;
    qint64 bookTotal = 0;
    bool gateConfigured = false;
    qint64 gateAvailable = -1; ///< -1: no gate or key absent
    qint64 oversold = 0;       ///< max(book sold, paid units) - stock, if positive
    qint64 stuck = 0;          ///< units locked with no live order + units the gate shows below the book
    BookCheck check;           ///< I1-I4, I6
    bool i5 = true;            ///< gate available == book available (true when book-only)
    QString i5Detail;
    /// --via: orders the server answered `reserved` that the book does not hold (absent or
    /// abandoned); the first few are listed in the notes. Any makes the drill fail.
    qint64 lostReservations = 0;
    /// --via: orders a payment was answered `paid` for that the book does not hold as PAID;
    /// the first few are listed in the notes. Any makes the drill fail.
    qint64 lostPayments = 0;

    QMap<FaultKind, FaultTally> faults;
    QuiesceSummary reconcile;
    QStringList notes;

    bool cancelled = false;    ///< stopped before every buyer was served (then never passed)

    /// Every invariant holds, nothing oversold or stuck, every injected fault healed, and
    /// the drill ran to its end.
    bool passed() const;
    bool invariantsHold() const { return check.ok() && i5; }
    /// One invariant: I5 from the gate, the others from the book's check.
    bool holds(Invariant invariant) const { return invariant == Invariant::I5 ? i5 : check.holds(invariant); }
    /// The DESIGN.md shape: sold, paid_units, oversold, stuck, invariants, throughput_per_s,
    /// latency_ms, faults; plus the rest.
    QJsonObject toJson() const;
    /// For people.
    QString toText() const;
};

} // namespace flashstock
