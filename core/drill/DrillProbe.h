#pragma once

// Internal to core/drill: the write probe of `drill --via`.

#include "drill/DrillChannel.h"

#include <QString>
#include <QStringList>

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace flashstock {

/// Reserves one unit of its own SKU every 100 ms through a channel of its own (the buyers'
/// path: HAProxy, a server, the gate, the book writers) on a thread of its own while the sale
/// runs, so the seconds a fault kept every write out can be read from its answers whatever
/// the sale's stock does. Each probe is a new order (`SKU-pN`, user `probe`) held for the
/// drill's hold. Thread-safe.
class DrillProbe {
public:
    /// One probe: when it was sent and answered (drillNowNs), and whether it was `reserved`.
    struct Answer {
        QString order;
        qint64 sentNs = 0;
        qint64 answeredNs = 0;
        bool reserved = false;
    };

    DrillProbe(DrillChannelFactory channels, QString sku, qint64 holdSeconds);
    ~DrillProbe();
    DrillProbe(const DrillProbe &) = delete;
    DrillProbe &operator=(const DrillProbe &) = delete;

    void start();
    /// Ends the probe after the one in flight is answered.
    void stop();

    /// Seconds from `startNs` to the answer of the first probe sent at or after it that was
    /// answered `reserved`; nullopt while none is.
    std::optional<double> outageAfter(qint64 startNs) const;
    /// Every probe so far, in order.
    std::vector<Answer> answers() const;
    /// Why the probe could not run (its channel), empty if it ran.
    QString problem() const;

private:
    void run();

    DrillChannelFactory m_channels;
    const QString m_sku;
    const qint64 m_holdSeconds;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::vector<Answer> m_answers; ///< under m_mutex
    QString m_problem;             ///< under m_mutex
};

} // namespace flashstock
