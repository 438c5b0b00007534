#pragma once

// Internal to core/drill: the state the drill's workers and controller share.

#include "drill/DrillOptions.h"
#include "drill/DrillSchedule.h"
#include "store/Database.h"

#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>

#include <atomic>
#include <chrono>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

namespace flashstock {

class BookWriters;

/// One fault that fired on one buyer (or one gate-wide event), for the heal check.
struct FaultRecord {
    FaultKind kind = FaultKind::LostCallback;
    qint64 buyer = -1;   ///< -1 for a gate-wide event
    QString order;
    QString token;       ///< crash-after-gate: the gate's token
    qint64 doneNs = 0;   ///< gate-wide: steady-clock ns when the event finished
    bool ok = true;      ///< gate-wide: the event itself succeeded
    QString detail;
    qint64 downNs = 0;   ///< server-kill, node-failover: steady-clock ns when the killed server was gone (the master stopped) and the buyers went on
    qint64 startNs = 0;  ///< gate-wide: steady-clock ns when it took effect (the kill, the restart), for its outage
};

/// An answer the server gave that the book must keep (`drill --via`): the order and when the
/// answer came (drillNowNs).
struct Acknowledged {
    QString order;
    qint64 atNs = 0;
};

/// A payment delivery waiting for any worker (duplicate-callback copies).
struct PendingPayment {
    QString order;
    QString payment;
};

/// The db-error fault: a buyer's order armed here fails its part of the book batch that
/// carries it (WriteFaults::failOrder), once; that order alone rolls back. Thread-safe.
class DrillDbErrors : public WriteFaults {
public:
    void arm(const QString &order);
    /// Disarms an order whose failure has not fired; true if it was still armed.
    bool disarm(const QString &order);
    bool failBeforeCommit() override { return false; }
    bool failOrder(const QString &order) override { return disarm(order); }

private:
    std::mutex m_mutex;
    QSet<QString> m_armed;
};

/// Shared by the workers and the controller of one drill. Atomics for counters, `mutex`
/// for everything else.
struct DrillShared {
    DrillShared(const DrillOptions &o, const DrillSchedule &s)
        : options(o)
        , schedule(s)
    {
    }

    const DrillOptions &options;
    const DrillSchedule &schedule;

    std::atomic<qint64> next{0};          ///< next buyer to dispatch
    std::atomic<qint64> active{0};        ///< buyers taken and not finished
    std::atomic<qint64> answered{0};
    std::atomic<qint64> reservedUnits{0};
    std::atomic<qint64> paidUnits{0};
    std::atomic<qint64> injected{0};
    std::atomic<qint64> gateWarnings{0};
    std::atomic<qint64> lastGateAnswerSentNs{0}; ///< send time of the latest reserve the gate answered
    std::atomic<int> workersDone{0};
    /// Buyers from this number on wait: the next gate-wide event fires before them.
    std::atomic<qint64> holdFrom{std::numeric_limits<qint64>::max()};
    std::atomic<bool> stop{false};        ///< cancelled: serve no new buyer
    /// The book writers every worker's book work goes to (group commit); nullptr: each
    /// worker's own connection (the broken-engine rehearsal, whose naive take is per book).
    BookWriters *writers = nullptr;
    DrillDbErrors dbErrors;

    std::mutex mutex;
    std::deque<PendingPayment> payments;
    QMap<QString, qint64> reserveOutcomes;
    QMap<QString, qint64> paymentOutcomes;
    QMap<QString, qint64> paidAnswersByOrder; ///< duplicate-callback orders: `paid` answers
    /// duplicate-callback orders: `duplicate` answers to a delivery sent again after its
    /// answer was lost (PaymentAnswer::resent): each may have been the one that paid
    QMap<QString, qint64> lostAnswersByOrder;
    std::vector<FaultRecord> records;
    std::vector<qint64> latenciesUs;
    QStringList errors;                       ///< first few unexpected errors
    std::vector<Acknowledged> reservedOrders; ///< --via: orders the server answered `reserved`
    std::vector<Acknowledged> paidOrders;     ///< --via: orders a payment was answered `paid` for

    /// The `paid` answers a duplicate-callback order's deliveries got, a lost answer
    /// resolved: the `paid` ones, or if there is none and a delivery's answer was lost (sent
    /// again, answered `duplicate`), that one (1). Call once its deliveries are all answered.
    qint64 paidAnswers(const QString &order);

    void addRecord(FaultRecord r);
    void count(QMap<QString, qint64> DrillShared::*map, const QString &word);
    void noteError(const QString &message);
};

/// Steady-clock nanoseconds (the drill's one clock for ordering events and answers).
inline qint64 drillNowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The order id of buyer `i`.
QString drillOrderId(const QString &sku, qint64 buyer);

/// One worker thread: opens its own Engine (or, with --via, its channel to the server) and
/// serves buyers and payment copies until every buyer is done. Failures to open the engine
/// or the channel are recorded with noteError().
void runDrillWorker(DrillShared &shared);

} // namespace flashstock
