#pragma once

#include "ConsoleTypes.h"

#include <QObject>
#include <QThread>

namespace flashstock {

class EngineWorker;

/// The console's link to the engine: owns the worker thread and the EngineWorker on it.
/// Every request returns at once (a queued call); answers arrive as the worker's signals,
/// forwarded here. GUI thread only. The thread is stopped and joined in the destructor,
/// after the request in progress finishes.
///
/// `sample()` is coalesced: while one sample is in flight, further ones are dropped, so a
/// slow gate never builds a queue of stale work.
class ConsoleSession : public QObject {
    Q_OBJECT
public:
    explicit ConsoleSession(QObject *parent = nullptr);
    ~ConsoleSession() override;

    /// The worker, to connect to its signals (they arrive queued on this thread).
    EngineWorker *worker() const { return m_worker; }
    const ConnectionInfo &connection() const { return m_info; }
    const EngineProfile &profile() const { return m_profile; }

    void open(const EngineProfile &profile);
    /// Returns false (and does nothing) while a previous sample has not come back.
    bool sample();
    void preflight(const QString &sku, qint64 units);
    void launchSale(const SaleRequest &request);
    void setSaleStatus(qint64 saleId, SaleStatus status);
    void setSaleBookOnly(qint64 saleId, bool on);
    void rebuildGate(const QString &sku);
    void changeSku(const SkuChange &change);
    /// `manual` false: one pass of the console's own expirer (with its heartbeat). Like
    /// sample(), a scheduled pass is dropped while the previous one has not come back.
    void releaseExpired(bool manual);
    void listDiscrepancies();
    void reconcileNow(qint64 graceMs);
    void resolveDiscrepancy(qint64 id, bool approve, const Correction &decidesOn, const QString &reason);
    void traceDiscrepancy(const Discrepancy &discrepancy);
    void searchLedger(LedgerSearchMode mode, const QString &text);

private:
    QThread m_thread;
    EngineWorker *m_worker = nullptr;
    ConnectionInfo m_info;
    EngineProfile m_profile;
    bool m_sampleInFlight = false;
    bool m_expiryInFlight = false;
};

} // namespace flashstock
