#pragma once

#include <QList>
#include <QString>

namespace flashstock {

/// Holds of one SKU that are past their expiry and still PENDING in the book: units that
/// stay locked until an expirer releases them.
struct OverdueHolds {
    QString sku;
    qint64 orders = 0;      ///< PENDING orders with a line of the SKU whose hold expired
    qint64 units = 0;       ///< their units of the SKU
    qint64 oldestDueMs = 0; ///< when the oldest of them expired, ms since the epoch (database clock)
};

/// Who releases expired holds on a schedule (`expire --every`, a console, the server): one
/// process's promise to run a pass every `everyMs`, as it writes it into the book.
struct ExpirerId {
    QString kind;       ///< `expire-every`, `console`, `server`
    qint64 everyMs = 0; ///< the interval between its passes, ms (> 0)
    QString address{};  ///< a server: where it listens for HTTP, `HOST:PORT`; empty otherwise
};

/// An expirer's last heartbeat, as the book holds it (table `expirer_heartbeats`).
struct ExpirerBeat {
    QString expirer;      ///< `KIND@HOST:PID`, one row per process
    QString kind;         ///< as ExpirerId::kind
    QString operatorName; ///< the operator the process acts for
    qint64 everyMs = 0;   ///< the interval it promised, ms
    qint64 atMs = 0;      ///< its last pass, ms since the epoch (database clock)
    qint64 released = 0;  ///< orders that pass released
    QString address{};    ///< a server's HTTP listen address, `HOST:PORT` as it listens; empty otherwise

    /// How late a beat may be, past its interval, before it counts as missed, ms.
    static constexpr qint64 kMissedAfterMs = 3000;

    /// Still running at `nowMs` (database clock): its last pass is at most two intervals
    /// and 5 s old, so one late or failed pass does not count it out.
    bool isAlive(qint64 nowMs) const { return nowMs - atMs <= 2 * everyMs + 5000; }
    /// Its next beat is overdue at `nowMs` (database clock): no pass for its interval plus
    /// kMissedAfterMs. What a console shows as a server that stopped (or is stuck).
    bool missedBeat(qint64 nowMs) const { return nowMs - atMs > everyMs + kMissedAfterMs; }
    /// The host from its id (`KIND@HOST:PID`).
    QString host() const;
    /// The process id from its id (`KIND@HOST:PID`), 0 if it has none.
    qint64 pid() const;
};

/// Whether holds past their expiry are being released: the book's overdue holds, by SKU,
/// and the heartbeats of the expirers seen in the last day.
struct ExpiryStatus {
    qint64 nowMs = 0;              ///< the database clock when read
    qint64 overdueOrders = 0;      ///< PENDING orders past their expiry (each once)
    QList<OverdueHolds> overdue;   ///< by SKU, sorted by SKU; only SKUs with overdue holds
    QList<ExpirerBeat> expirers;   ///< newest beat first

    /// Units locked by holds past their expiry.
    qint64 overdueUnits() const;
    /// The expirers alive at nowMs (ExpirerBeat::isAlive), newest beat first.
    QList<ExpirerBeat> alive() const;
    /// The SKU's overdue holds, or a zero entry.
    OverdueHolds overdueOf(const QString &sku) const;
};

} // namespace flashstock
