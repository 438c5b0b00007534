#include "EngineWorker.h"

#include "Engine.h"
#include "Identifiers.h"
#include "gate/EmbeddedRedis.h"
#include "gate/Gate.h"
#include "open/EngineOpener.h"
#include "reconcile/Approvers.h"
#include "store/ApproverStore.h"
#include "store/BookReplication.h"
#include "reconcile/Reconciler.h"
#include "store/DiscrepancyStore.h"
#include "store/SaleStore.h"

#include <QDateTime>
#include <QElapsedTimer>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr int kTraceRows = 200;        // a SKU's trace: its newest rows
constexpr int kRecentRows = 200;       // the ledger view before any search
constexpr int kSearchRowsCap = 5000;   // a ledger search keeps the newest rows only

} // namespace

EngineWorker::EngineWorker(QObject *parent)
    : QObject(parent)
{
}

EngineWorker::~EngineWorker() = default;

bool EngineWorker::requireEngine(const QString &what)
{
    if (m_engine)
        return true;
    emit failed(what, tr("The book of record is not open."));
    return false;
}

void EngineWorker::open(const EngineProfile &profile)
{
    m_reconciler.reset();
    m_engine.reset();
    m_profile = profile;
    ConnectionInfo info;
    info.reconcilerAvailable = true;
    const auto finish = [&](const QString &error) {
        info.error = error;
        emit opened(info);
    };
    auto resolved = EngineOpener::resolve(profile);
    if (!resolved)
        return finish(resolved.error().message);
    info.previousGate = stopStartedEmbedded(*resolved);
    info.bookDisplay = resolved->book.display();
    info.gateConfigured = resolved->gateMode != GateMode::BookOnly;
    info.gateDisplay = resolved->gate ? resolved->gate->toDisplayString() : tr("none (book-only)");
    auto opened = EngineOpener::open(*resolved, u"console"_s);
    if (!opened)
        return finish(opened.error().message);
    // A gate that did not come up stays configured and down (never book-only by accident):
    // reserves fail closed and starting a sale says the gate is missing.
    if (!opened->gate.problem.isEmpty())
        info.gateDisplay = tr("embedded redis-server failed: %1").arg(opened->gate.problem);
    if (opened->gate.startedNow)
        m_startedEmbedded = resolved->dataDir;
    m_engine = std::move(opened->engine);
    m_reconciler = std::make_unique<Reconciler>(*m_engine);
    info.bookOpen = true;
    finish({});
}

QString EngineWorker::stopStartedEmbedded(const ResolvedProfile &next)
{
    if (m_startedEmbedded.isEmpty())
        return {};
    if (next.gateMode == GateMode::Embedded && next.dataDir == m_startedEmbedded)
        return {}; // still the gate
    EmbeddedRedis embedded(std::exchange(m_startedEmbedded, {}));
    auto stopped = embedded.stopIfUnused();
    if (!stopped)
        return tr("The embedded redis-server this console started is left running: %1").arg(stopped.error().message);
    if (stopped->otherClients > 0)
        return tr("The embedded redis-server this console started (%1) is left running: %n other client(s) use it.",
                  nullptr, int(stopped->otherClients))
            .arg(embedded.socketPath());
    if (!stopped->wasRunning)
        return {};
    return tr("Stopped the embedded redis-server this console had started (pid %1): the new connection does not use "
              "it.")
        .arg(stopped->pid);
}

void EngineWorker::sample()
{
    LiveSnapshot snap;
    snap.atMs = QDateTime::currentMSecsSinceEpoch();
    if (!m_engine) {
        snap.health.bookDetail = tr("not open");
        emit sampled(snap);
        return;
    }
    HealthSnapshot &h = snap.health;
    QElapsedTimer timer;
    timer.start();
    auto levels = m_engine->book().allLevels();
    h.bookRoundTripUs = timer.nsecsElapsed() / 1000;
    h.bookUp = levels.has_value();
    if (!levels)
        h.bookDetail = levels.error().message;
    else if (auto replication = readBookReplication(m_engine->database()))
        h.bookReplication = *replication;

    if (Gate *gate = m_engine->gate()) {
        h.gateConfigured = true;
        const GateHealth gh = gate->health();
        h.gateUp = gh.reachable;
        h.gateScriptsLoaded = gh.scriptsLoaded;
        h.gateRoundTripUs = gh.roundTripUs;
        h.gateDetail = gh.detail;
        h.gateNodes = gh.nodes;
    }
    if (levels)
        sampleSkus(snap, *levels);
    emit sampled(snap);
    reportWarnings();
}

void EngineWorker::sampleSkus(LiveSnapshot &snap, const QList<SkuLevels> &levels)
{
    if (auto sales = m_engine->sales().list())
        snap.sales = *sales;
    if (auto expiry = m_engine->expiryStatus())
        snap.expiry = *expiry;
    QMap<QString, QList<qint64>> pausing;
    if (auto p = DiscrepancyStore(m_engine->database()).pausingDiscrepancies())
        pausing = *p;
    QHash<QString, Sale> latest;
    for (const Sale &s : std::as_const(snap.sales)) // newest first: the first one seen is the latest
        if (!latest.contains(s.sku))
            latest.insert(s.sku, s);
    for (const SkuLevels &l : levels) {
        SkuSample s{l.sku, l.available, l.locked, l.sold, l.total, int(l.buckets.size()), -1};
        s.bucketLevels = l.buckets;
        if (latest.contains(l.sku))
            s.sale = latest.value(l.sku);
        s.pausedBy = pausing.value(l.sku);
        s.overdue = snap.expiry ? snap.expiry->overdueOf(l.sku) : OverdueHolds{l.sku, 0, 0, 0};
        // A gate that is down would cost a timeout per SKU: ask only when it answered.
        if (snap.health.gateUp) {
            const GateSide gate = m_engine->gateLevels(l.sku);
            if (gate.reachable) {
                s.gateAvailable = gate.available;
                // A SKU whose latest sale is book-only skips the gate: its refusals are not counted there.
                if (gate.counts && !(s.sale && s.sale->bookOnly)) {
                    s.gateReserved = gate.counts->reserved;
                    s.gateRefused = gate.counts->refused();
                }
            }
        }
        snap.skus << s;
    }
}

void EngineWorker::reportWarnings()
{
    const WarningRing warnings = m_engine->takeWarnings();
    if (!warnings.isEmpty() || warnings.dropped() > 0)
        emit warned(warnings.items(), warnings.dropped());
}

void EngineWorker::preflight(const QString &sku, qint64 units)
{
    PreflightResult result;
    result.sku = sku;
    if (!requireEngine(tr("Pre-flight")))
        return;
    if (auto ok = checkSkuId(sku); !ok) {
        result.items << PreflightItem{tr("SKU id: %1").arg(ok.error().message), false, true};
        emit preflightReady(result);
        return;
    }
    if (Gate *gate = m_engine->gate()) {
        const GateHealth gh = gate->health();
        const bool ok = gh.reachable && gh.scriptsLoaded;
        result.items << PreflightItem{ok ? tr("Gate reachable, scripts loaded (%1 µs)").arg(gh.roundTripUs)
                                         : tr("Gate not ready: %1").arg(gh.detail),
                                      ok, true};
    } else {
        result.items << PreflightItem{tr("No gate configured: reserves go straight to the book (slower, exact)"),
                                      true, false};
    }
    addSkuPlan(result, sku, units);
    addLaunchRules(result, sku);
    emit preflightReady(result);
}

void EngineWorker::addSkuPlan(PreflightResult &result, const QString &sku, qint64 units)
{
    auto levels = m_engine->book().levels(sku);
    result.skuExists = levels.has_value();
    if (!levels) {
        result.items << PreflightItem{tr("Will create SKU %1 with %L2 units (ledgered, operator %3)")
                                          .arg(sku)
                                          .arg(units)
                                          .arg(m_engine->book().actor().operatorName),
                                      units > 0, true};
        return;
    }
    result.bookAvailable = levels->available;
    result.bookTotal = levels->total;
    // A launch never changes an existing SKU's stock: it sells what the book has.
    if (levels->available > 0)
        result.items << PreflightItem{tr("Existing SKU: the sale will offer its %L1 available units; its stock is "
                                         "not changed")
                                          .arg(levels->available),
                                      true, true};
    else
        result.items << PreflightItem{tr("Existing SKU with no available units: restock it first (Restock…, "
                                         "ledgered with a reason)"),
                                      false, true};
}

void EngineWorker::addLaunchRules(PreflightResult &result, const QString &sku)
{
    auto blockers = m_engine->launchBlockers(sku);
    if (!blockers) {
        result.items << PreflightItem{tr("Launch rules not checked: %1").arg(blockers.error().message), false, true};
        return;
    }
    int discrepancies = 0;
    bool liveSale = false;
    for (const LaunchBlocker &b : std::as_const(*blockers)) {
        if (b.kind == LaunchBlocker::Kind::PendingDiscrepancy) {
            ++discrepancies;
            continue;
        }
        liveSale = true;
        result.items << PreflightItem{tr("Sale #%1 of this SKU is still live (open, paused or scheduled): stop it first")
                                          .arg(b.id),
                                      false, true};
    }
    if (!liveSale)
        result.items << PreflightItem{tr("No other live sale of this SKU"), true, true};
    result.items << PreflightItem{discrepancies ? tr("%n open discrepancy(s) on this SKU: resolve first", nullptr,
                                                     discrepancies)
                                                : tr("No open discrepancy on this SKU"),
                                  discrepancies == 0, true};
}

void EngineWorker::launchSale(const SaleRequest &req)
{
    const QString what = tr("Launch sale of %1").arg(req.sku);
    if (!requireEngine(what))
        return;
    if (!m_engine->book().levels(req.sku)) {
        if (auto added = m_engine->addSku(req.sku, req.units, req.buckets); !added)
            return emit failed(what, added.error().message);
    }
    auto sale = m_engine->createSale(req.sku, req.startMs, req.endMs, req.holdSeconds, req.perUserLimit);
    if (!sale)
        return emit failed(what, sale.error().message);
    if (req.start) {
        auto started = m_engine->setSaleStatus(sale->id, SaleStatus::Open);
        if (!started)
            return emit failed(what, tr("sale #%1 was created and is not open: %2").arg(sale->id).arg(
                                         started.error().message));
        sale = started;
    }
    emit saleLaunched(*sale);
}

void EngineWorker::setSaleStatus(qint64 saleId, SaleStatus status)
{
    const QString what = status == SaleStatus::Open     ? tr("Start sale #%1").arg(saleId)
                         : status == SaleStatus::Paused ? tr("Pause sale #%1").arg(saleId)
                                                        : tr("Stop sale #%1").arg(saleId);
    if (!requireEngine(what))
        return;
    auto sale = m_engine->setSaleStatus(saleId, status);
    if (!sale)
        return emit failed(what, sale.error().message);
    emit saleChanged(*sale);
}

void EngineWorker::setSaleBookOnly(qint64 saleId, bool on)
{
    const QString what = on ? tr("Switch sale #%1 to book-only").arg(saleId)
                            : tr("Switch sale #%1 back to the gate").arg(saleId);
    if (!requireEngine(what))
        return;
    auto sale = m_engine->setSaleBookOnly(saleId, on);
    if (!sale)
        return emit failed(what, sale.error().message);
    emit saleChanged(*sale);
}

void EngineWorker::rebuildGate(const QString &sku)
{
    const QString what = tr("Rebuild the gate of %1").arg(sku);
    if (!requireEngine(what))
        return;
    auto available = m_engine->rebuildGate(sku);
    if (!available)
        return emit failed(what, available.error().message);
    emit gateRebuilt(sku, *available);
}

void EngineWorker::changeSku(const SkuChange &c)
{
    QString what;
    switch (c.kind) {
    case SkuChange::Kind::Add: what = tr("Add SKU %1").arg(c.sku); break;
    case SkuChange::Kind::Restock: what = tr("Restock %1").arg(c.sku); break;
    case SkuChange::Kind::Buckets: what = tr("Change the buckets of %1").arg(c.sku); break;
    case SkuChange::Kind::Rebalance: what = tr("Rebalance %1").arg(c.sku); break;
    }
    if (!requireEngine(what))
        return;
    if (c.kind == SkuChange::Kind::Restock && c.reason.trimmed().isEmpty())
        return emit failed(what, tr("reason: a restock needs a reason for the ledger"));
    Result<Adjustment> done = fail(ErrorCode::Internal, u"unknown change"_s);
    QString summary;
    switch (c.kind) {
    case SkuChange::Kind::Add:
        done = m_engine->addSku(c.sku, c.units, c.buckets);
        summary = tr("Added SKU %1 with %L2 units in %n bucket(s)", nullptr, c.buckets).arg(c.sku).arg(c.units);
        break;
    case SkuChange::Kind::Restock:
        done = m_engine->restock(c.sku, c.units, c.reason.trimmed());
        summary = tr("Restocked %1 by %L2 units").arg(c.sku).arg(c.units);
        break;
    case SkuChange::Kind::Buckets:
        done = m_engine->book().setBucketCount(c.sku, c.buckets);
        summary = tr("%1 now has %n bucket(s)", nullptr, c.buckets).arg(c.sku);
        break;
    case SkuChange::Kind::Rebalance:
        done = m_engine->book().rebalance(c.sku, c.from, c.to, c.units);
        summary = tr("Moved %L1 units of %2 from bucket %3 to bucket %4").arg(c.units).arg(c.sku).arg(c.from).arg(c.to);
        break;
    }
    if (!done)
        return emit failed(what, done.error().message);
    emit skuChanged(c, tr("%1 (adjustment adj:%2, operator %3)")
                           .arg(summary)
                           .arg(done->id)
                           .arg(m_engine->book().actor().operatorName));
}

void EngineWorker::releaseExpired(bool manual)
{
    ExpiryRun run;
    run.manual = manual;
    if (!m_engine) {
        run.problem = tr("The book of record is not open.");
        emit expired(run);
        return;
    }
    QList<OrderChange> released;
    if (manual) {
        auto r = m_engine->expire();
        if (r)
            released = *r;
        else
            run.problem = r.error().message;
    } else {
        auto pass = m_engine->expireAsExpirer(ExpirerId{u"console"_s, kExpirerEveryMs});
        if (pass) {
            released = pass->released;
            run.problem = pass->heartbeatProblem;
        } else {
            run.problem = pass.error().message;
        }
    }
    for (const OrderChange &c : std::as_const(released)) {
        ++run.orders;
        for (const OrderLine &l : c.lines)
            run.units += l.qty;
    }
    emit expired(run);
}

void EngineWorker::listDiscrepancies()
{
    if (!requireEngine(tr("List discrepancies")))
        return;
    auto list = m_reconciler->list();
    if (!list)
        return emit failed(tr("List discrepancies"), list.error().message);
    emit discrepanciesListed(*list);
    auto policy = ApproverStore(m_engine->database()).policy(seedApprovers(m_profile.dataDir));
    if (!policy)
        return emit failed(tr("Approvers"), policy.error().message);
    emit approversListed({*policy, m_profile.operatorName, policy->allows(m_profile.operatorName)});
}

void EngineWorker::reconcileNow(qint64 graceMs)
{
    if (!requireEngine(tr("Reconcile")))
        return;
    auto report = m_reconciler->runPass(graceMs);
    if (!report)
        return emit failed(tr("Reconcile"), report.error().message);
    emit reconciled(tr("Reconcile pass: %1 new, %2 healed automatically, %3 waiting for approval")
                        .arg(report->discrepancies.size())
                        .arg(report->autoFixed)
                        .arg(report->stillPending));
    listDiscrepancies();
}

void EngineWorker::resolveDiscrepancy(qint64 id, bool approve, const Correction &decidesOn, const QString &reason)
{
    const QString what = approve ? tr("Approve discrepancy #%1").arg(id) : tr("Reject discrepancy #%1").arg(id);
    if (!requireEngine(what))
        return;
    const QStringList seed = seedApprovers(m_profile.dataDir);
    const DecisionBy by = decisionByThisProcess(m_profile.operatorName);
    auto done = approve ? m_reconciler->approve(id, decidesOn, by, reason, seed) : m_reconciler->reject(id, by, reason, seed);
    if (!done)
        return emit failed(what, done.error().message);
    emit discrepancyResolved(*done);
    listDiscrepancies();
}

void EngineWorker::traceDiscrepancy(const Discrepancy &d)
{
    if (!requireEngine(tr("Ledger trace")))
        return;
    auto rows = d.order.isEmpty() ? m_engine->book().ledgerOfSku(d.sku, kTraceRows, d.bucket)
                                  : m_engine->book().ledgerOfOrder(d.order);
    if (!rows)
        return emit failed(tr("Ledger trace"), rows.error().message);
    emit traceReady(d.id, *rows);
}

void EngineWorker::searchLedger(LedgerSearchMode mode, const QString &text)
{
    LedgerSearchResult result;
    result.mode = mode;
    result.text = text;
    if (!requireEngine(tr("Ledger search")))
        return;
    Book &book = m_engine->book();
    switch (mode) {
    case LedgerSearchMode::Recent:
        if (auto rows = book.recentLedger(kRecentRows))
            result.rows = *rows;
        else
            result.error = rows.error().message;
        break;
    case LedgerSearchMode::Order:
        if (auto rows = book.ledgerOfOrder(text)) {
            result.rows = *rows;
            // The order as the server's GET /v1/orders/{order} reads it.
            if (auto order = book.order(text))
                result.order = *order;
            else if (order.error().code != ErrorCode::NotFound)
                result.error = order.error().message;
            if (auto refunds = book.refundCount(text))
                result.refunds = *refunds;
        } else {
            result.error = rows.error().message;
        }
        break;
    case LedgerSearchMode::Sku:
        if (auto rows = book.ledgerOfSku(text, kSearchRowsCap))
            result.rows = *rows;
        else
            result.error = rows.error().message;
        break;
    case LedgerSearchMode::Token: {
        // The book has no token index: walk each SKU's rows (in this worker, off the GUI thread).
        auto skus = book.skus();
        if (!skus) {
            result.error = skus.error().message;
            break;
        }
        for (const QString &sku : *skus) {
            auto rows = book.ledgerOfSku(sku);
            if (!rows)
                continue;
            for (const LedgerRow &row : *rows)
                if (row.token == text)
                    result.rows << row;
            if (!result.rows.isEmpty())
                break; // a token belongs to one SKU
        }
        break;
    }
    }
    emit ledgerFound(result);
}

} // namespace flashstock
