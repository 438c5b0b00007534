#pragma once

#include <QList>
#include <QString>

namespace flashstock {

/// What kind of trouble an engine warning reports. Each is gate trouble met after the book
/// had answered (left for the reconciler or an operator), never a failed call.
enum class WarningKind {
    GateUnavailable,   ///< a reserve found the gate unreachable (answered gate_unavailable)
    GateRestored,      ///< the SKU's stock key was missing: the gate was refilled from the book
    GateNotLoaded,     ///< a new SKU's gate was not loaded (the next reserve or gate rebuild loads it)
    GateNotRaised,     ///< a restock did not reach the gate (the reconciler raises it)
    GateNotRebuilt,    ///< leaving book-only mode did not rebuild the gate (run gate rebuild)
    SaleNotPushed,     ///< the gate did not get a sale's status, window or limit
    TokenNotReleased,  ///< the gate did not take a token's units back (the reconciler does)
    TokenNotSettled,   ///< the gate did not settle a booked token (the reconciler does)
    TokenNotSold,      ///< the gate did not mark a paid order's token sold
    RefusalNotCounted, ///< the gate's counters missed a refusal of the book (the console's reject rate)
};

/// The kind's stable lower-case name (`gate_restored`), for logs, JSON and the console.
QString warningKindName(WarningKind kind);

/// One warning of an engine: a plain value, any thread.
struct EngineWarning {
    WarningKind kind = WarningKind::GateUnavailable;
    QString sku;      ///< the SKU it concerns (empty if none)
    QString message;  ///< for people: what happened and what heals it
    qint64 atMs = 0;  ///< when, wall clock, ms since the epoch
};

/// The newest warnings, at most `capacity` of them: adding to a full ring drops the oldest
/// and counts it. A plain value; not thread-safe (one owner, like the Engine that fills it).
class WarningRing {
public:
    /// `capacity` >= 1 warnings are kept.
    explicit WarningRing(qsizetype capacity);

    /// Adds `warning` as the newest, dropping the oldest when full.
    void add(EngineWarning warning);
    /// Adds `warnings` (oldest first) and `alreadyDropped` warnings their sender had to drop.
    void add(const QList<EngineWarning> &warnings, qint64 alreadyDropped = 0);
    /// The warnings kept, oldest first.
    const QList<EngineWarning> &items() const { return m_items; }
    /// Warnings kept (at most the capacity).
    qsizetype size() const { return m_items.size(); }
    /// No warning kept (some may have been dropped: see dropped()).
    bool isEmpty() const { return m_items.isEmpty(); }
    /// Warnings dropped (oldest first, or before they got here) since the last take() or clear().
    qint64 dropped() const { return m_dropped; }
    /// Returns this ring (warnings and dropped count) and leaves it empty, same capacity.
    WarningRing take();
    /// Empties the ring and the dropped count.
    void clear();

private:
    qsizetype m_capacity;
    QList<EngineWarning> m_items;
    qint64 m_dropped = 0;
};

} // namespace flashstock
