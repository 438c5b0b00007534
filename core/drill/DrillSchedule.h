#pragma once

#include "drill/DrillOptions.h"

#include <QMap>
#include <QString>

#include <optional>
#include <vector>

namespace flashstock {

/// What one buyer will do, fixed before the workers start.
struct BuyerPlan {
    bool pays = false;                ///< pays after a successful reserve
    std::optional<FaultKind> fault;   ///< the per-buyer fault of this request, if any
    int copies = 1;                   ///< duplicate-callback: deliveries of the payment (2 or 3)

    bool operator==(const BuyerPlan &) const = default;
};

/// A gate-wide fault fired when buyer `beforeBuyer` is about to be dispatched.
struct GlobalEvent {
    qint64 beforeBuyer = 0;
    FaultKind kind = FaultKind::ScriptFlush;

    bool operator==(const GlobalEvent &) const = default;
};

/// The fault schedule of a drill: drawn from std::mt19937_64 seeded with the drill's seed,
/// before any worker starts, so the same seed (and sizes, rates) gives the same schedule.
/// Per request, in order: pays (< pay ratio), then one draw per fault kind (< its rate); the
/// first per-buyer kind that hits is the buyer's fault, a gate-wide kind that hits is an
/// event before that request. With `all` (and for a kind given as `NAME=once`), a gate-wide
/// kind that drew nothing is placed once between 10% and 50% of the buyers, and a per-buyer
/// kind that drew no buyer among the first stock/2 (who still find stock, so the fault
/// really fires) is placed on one of them.
/// Kinds that cannot run in this drill (DrillOptions::leftOutReason) are dropped.
struct DrillSchedule {
    std::vector<BuyerPlan> buyers;     ///< one per buyer, index = buyer number
    std::vector<GlobalEvent> events;   ///< sorted by beforeBuyer
    QMap<FaultKind, qint64> scheduled; ///< requests (or events) each kind was scheduled on

    /// Builds the schedule of `options` (assumed valid).
    static DrillSchedule build(const DrillOptions &options);
    /// SHA-1 of the schedule, hex, first 16 digits (equal schedules, equal digests).
    QString digest() const;

    bool operator==(const DrillSchedule &) const = default;
};

} // namespace flashstock
