#pragma once

#include "ConsoleTypes.h"

#include <QObject>

#include <memory>

namespace flashstock {

class Engine;
class Reconciler;
struct ResolvedProfile;

/// Runs every engine call of the console. Lives on its own QThread (ConsoleSession moves it
/// there) and opens its own Engine inside that thread, so the GUI thread never waits on
/// Redis or SQL. Slots are invoked queued; answers come back as queued signals carrying
/// value types. A failure is reported through `failed()` and never stops the worker.
class EngineWorker : public QObject {
    Q_OBJECT
public:
    explicit EngineWorker(QObject *parent = nullptr);
    ~EngineWorker() override;

    /// How often the console's own expirer runs (ConsoleSession::releaseExpired), ms.
    static constexpr qint64 kExpirerEveryMs = 5000;

public slots:
    /// Opens the engine on `profile` through EngineOpener (starting or reusing the embedded
    /// redis-server when no gate URL is given). A gate that cannot be started is configured
    /// and down (ConnectionInfo::gateDisplay says why), never book-only. The engine open
    /// before is closed first, whether or not this one opens; an embedded redis-server this
    /// worker started for it is stopped when `profile` resolves to another gate, unless
    /// another client still uses it (ConnectionInfo::previousGate says which).
    void open(const flashstock::EngineProfile &profile);
    /// Health of both tiers, every SKU's levels (book and gate), its sale, the discrepancies
    /// that pause it and its holds past expiry, and the sales; then the engine's warnings
    /// since the last sample, if any (warned()).
    void sample();
    /// The launch pre-flight for `sku` (`units`: the stock a new SKU would be created with):
    /// gate health, what the launch will do to the SKU, and the engine's launch rules
    /// (Engine::launchBlockers). It changes nothing.
    void preflight(const QString &sku, qint64 units);
    /// Creates the SKU if it is new (with the request's units and buckets), creates the sale
    /// and, if asked, starts it. An existing SKU's stock is never changed here.
    void launchSale(const flashstock::SaleRequest &request);
    /// Start (Open, also resuming a paused sale), pause (Paused) or stop (Stopped) a sale.
    void setSaleStatus(qint64 saleId, SaleStatus status);
    /// Switches a sale to book-only or back (back rebuilds the SKU's gate: Engine::setSaleBookOnly).
    void setSaleBookOnly(qint64 saleId, bool on);
    /// Reloads the SKU's gate from the book (Engine::rebuildGate).
    void rebuildGate(const QString &sku);
    /// Adds a SKU, restocks it, changes its buckets or rebalances them, ledgered in the
    /// operator's name (the gate kept in step).
    void changeSku(const flashstock::SkuChange &change);
    /// Releases every hold past its expiry: `manual` for the operator's "now" (Engine::expire),
    /// else one pass of the console's own expirer with its heartbeat (Engine::expireAsExpirer).
    void releaseExpired(bool manual);
    /// Every discrepancy, newest first.
    void listDiscrepancies();
    /// One reconcile pass (`graceMs`), then the list again.
    void reconcileNow(qint64 graceMs);
    /// Approve (true) or reject (false) a pending discrepancy with `reason`; an approval
    /// decides on `decidesOn`, the correction the operator was shown (Reconciler::approve).
    void resolveDiscrepancy(qint64 id, bool approve, const flashstock::Correction &decidesOn, const QString &reason);
    /// The ledger rows behind a discrepancy: its order's if it names one, else the newest
    /// rows of its SKU (of its bucket, when it names one).
    void traceDiscrepancy(const flashstock::Discrepancy &discrepancy);
    /// Ledger rows by order, token or SKU, or the newest rows of every SKU (Recent).
    void searchLedger(flashstock::LedgerSearchMode mode, const QString &text);

signals:
    void opened(const flashstock::ConnectionInfo &info);
    void sampled(const flashstock::LiveSnapshot &snapshot);
    void preflightReady(const flashstock::PreflightResult &result);
    void saleLaunched(const flashstock::Sale &sale);
    void saleChanged(const flashstock::Sale &sale);
    /// The SKU's gate was rebuilt from the book: `available` units in the gate now.
    void gateRebuilt(const QString &sku, qint64 available);
    /// A SKU change was applied; `summary` says what moved, for people.
    void skuChanged(const flashstock::SkuChange &change, const QString &summary);
    void expired(const flashstock::ExpiryRun &run);
    void discrepanciesListed(const QList<flashstock::Discrepancy> &list);
    /// The book's approver policy, with every listing of the discrepancies.
    void approversListed(const flashstock::ApproverView &view);
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
    bool requireEngine(const QString &what);
    void addSkuPlan(PreflightResult &result, const QString &sku, qint64 units);
    void addLaunchRules(PreflightResult &result, const QString &sku);
    void reportWarnings();
    /// The sample's SKUs from the book's levels, sales, pauses and expiry; the gate's side
    /// when it answered.
    void sampleSkus(LiveSnapshot &snap, const QList<SkuLevels> &levels);

    /// Stops the embedded redis-server of m_startedEmbedded unless `next` uses it; what
    /// happened, for people (empty: nothing to do).
    QString stopStartedEmbedded(const ResolvedProfile &next);

    EngineProfile m_profile;
    QString m_startedEmbedded; ///< data dir of the embedded redis-server this worker started; empty: none
    std::unique_ptr<Engine> m_engine;
    std::unique_ptr<Reconciler> m_reconciler;
};

} // namespace flashstock
