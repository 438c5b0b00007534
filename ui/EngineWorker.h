#pragma once

#include "ConsoleTypes.h"

#include <QObject>

#include <memory>

namespace flashstock {

class Engine;
class Reconciler;

/// Runs every engine call of the console. Lives on its own QThread (ConsoleSession moves it
/// there) and opens its own Engine inside that thread, so the GUI thread never waits on
/// Redis or SQL. Slots are invoked queued; answers come back as queued signals carrying
/// value types. A failure is reported through `failed()` and never stops the worker.
class EngineWorker : public QObject {
    Q_OBJECT
public:
    explicit EngineWorker(QObject *parent = nullptr);
    ~EngineWorker() override;

public slots:
    /// Opens the engine on `profile` through EngineOpener (starting or reusing the embedded
    /// redis-server when no gate URL is given). A gate that cannot be started is configured
    /// and down (ConnectionInfo::gateDisplay says why), never book-only.
    void open(const flashstock::EngineProfile &profile);
    /// Health of both tiers, every SKU's levels (book and gate) and the sales; then the
    /// engine's warnings since the last sample, if any (warned()).
    void sample();
    /// The launch pre-flight for `units` of `sku`: gate health, stock, and the engine's
    /// launch rules (Engine::launchBlockers).
    void preflight(const QString &sku, qint64 units);
    /// Creates (or tops up) the SKU, creates the sale and, if asked, starts it.
    void launchSale(const flashstock::SaleRequest &request);
    /// Start (Open, also resuming a paused sale), pause (Paused) or stop (Stopped) a sale.
    void setSaleStatus(qint64 saleId, SaleStatus status);
    /// Every discrepancy, newest first.
    void listDiscrepancies();
    /// One reconcile pass (`graceMs`), then the list again.
    void reconcileNow(qint64 graceMs);
    /// Approve (true) or reject (false) a pending discrepancy with `reason`.
    void resolveDiscrepancy(qint64 id, bool approve, const QString &reason);
    /// The ledger rows behind a discrepancy: its order's if it names one, else its SKU's last rows.
    void traceDiscrepancy(const flashstock::Discrepancy &discrepancy);
    /// Ledger rows by order, token or SKU.
    void searchLedger(flashstock::LedgerSearchMode mode, const QString &text);

signals:
    void opened(const flashstock::ConnectionInfo &info);
    void sampled(const flashstock::LiveSnapshot &snapshot);
    void preflightReady(const flashstock::PreflightResult &result);
    void saleLaunched(const flashstock::Sale &sale);
    void saleChanged(const flashstock::Sale &sale);
    void discrepanciesListed(const QList<flashstock::Discrepancy> &list);
    /// `summary`: what the pass found, for people.
    void reconciled(const QString &summary);
    void discrepancyResolved(const flashstock::Discrepancy &discrepancy);
    void traceReady(qint64 discrepancyId, const QList<flashstock::LedgerRow> &rows);
    void ledgerFound(const flashstock::LedgerSearchResult &result);
    /// `what`: the action that failed (for people); `message`: why.
    void failed(const QString &what, const QString &message);
    /// The engine's warnings since the last report, oldest first; `dropped`: older ones the
    /// engine's ring had to drop meanwhile.
    void warned(const QList<flashstock::EngineWarning> &warnings, qint64 dropped);

private:
    QStringList approvers() const;
    bool requireEngine(const QString &what);
    void addLaunchRules(PreflightResult &result, const QString &sku);
    void reportWarnings();

    EngineProfile m_profile;
    std::unique_ptr<Engine> m_engine;
    std::unique_ptr<Reconciler> m_reconciler;
};

} // namespace flashstock
