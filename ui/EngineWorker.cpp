#include "EngineWorker.h"

#include "Engine.h"
#include "Identifiers.h"
#include "gate/Gate.h"
#include "open/EngineOpener.h"
#include "reconcile/Approvers.h"
#include "reconcile/Reconciler.h"
#include "store/SaleStore.h"

#include <QDateTime>
#include <QElapsedTimer>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr int kTraceRows = 200;        // a SKU's trace: its newest rows
constexpr int kSearchRowsCap = 5000;   // a ledger search keeps the newest rows only

QList<LedgerRow> newest(QList<LedgerRow> rows, int cap)
{
    if (rows.size() > cap)
        rows = rows.mid(rows.size() - cap);
    return rows;
}

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
    m_engine = std::move(opened->engine);
    m_reconciler = std::make_unique<Reconciler>(*m_engine);
    info.bookOpen = true;
    finish({});
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
    auto skus = m_engine->book().skus();
    h.bookRoundTripUs = timer.nsecsElapsed() / 1000;
    h.bookUp = skus.has_value();
    if (!skus)
        h.bookDetail = skus.error().message;

    if (Gate *gate = m_engine->gate()) {
        h.gateConfigured = true;
        const GateHealth gh = gate->health();
        h.gateUp = gh.reachable;
        h.gateScriptsLoaded = gh.scriptsLoaded;
        h.gateRoundTripUs = gh.roundTripUs;
        h.gateDetail = gh.detail;
    }
    if (skus) {
        if (auto sales = m_engine->sales().list())
            snap.sales = *sales;
        // A SKU whose latest sale is book-only skips the gate: its refusals are not counted there.
        QHash<QString, bool> bookOnly;
        for (const Sale &s : std::as_const(snap.sales)) // newest first: the first one seen is the latest
            if (!bookOnly.contains(s.sku))
                bookOnly.insert(s.sku, s.bookOnly);
        for (const QString &sku : *skus) {
            auto levels = m_engine->book().levels(sku);
            if (!levels)
                continue;
            SkuSample s{sku, levels->available, levels->locked, levels->sold, levels->total,
                        int(levels->buckets.size()), -1};
            // A gate that is down would cost a timeout per SKU: ask only when it answered.
            if (h.gateUp) {
                const GateSide gate = m_engine->gateLevels(sku);
                if (gate.reachable) {
                    s.gateAvailable = gate.available;
                    if (gate.counts && !bookOnly.value(sku)) {
                        s.gateReserved = gate.counts->reserved;
                        s.gateRefused = gate.counts->refused();
                    }
                }
            }
            snap.skus << s;
        }
    }
    emit sampled(snap);
    reportWarnings();
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
    auto levels = m_engine->book().levels(sku);
    result.skuExists = levels.has_value();
    if (levels) {
        result.bookAvailable = levels->available;
        if (levels->available >= units)
            result.items << PreflightItem{tr("Book stock: %L1 available ≥ %L2 units").arg(levels->available).arg(units),
                                          true, true};
        else
            result.items << PreflightItem{tr("Book stock: %L1 available < %L2 units; launch restocks %L3 (ledgered)")
                                              .arg(levels->available)
                                              .arg(units)
                                              .arg(units - levels->available),
                                          true, true};
    } else {
        result.items << PreflightItem{tr("New SKU: created with %L1 units (ledgered)").arg(units), units > 0, true};
    }
    addLaunchRules(result, sku);
    emit preflightReady(result);
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
    auto levels = m_engine->book().levels(req.sku);
    if (!levels) {
        if (auto added = m_engine->addSku(req.sku, req.units, req.buckets); !added)
            return emit failed(what, added.error().message);
    } else if (levels->available < req.units) {
        auto r = m_engine->restock(req.sku, req.units - levels->available, tr("stock for a flash sale"));
        if (!r)
            return emit failed(what, r.error().message);
    }
    auto sale = m_engine->createSale(req.sku, req.startMs, req.endMs, req.holdSeconds, req.perUserLimit);
    if (!sale)
        return emit failed(what, sale.error().message);
    if (req.start) {
        auto started = m_engine->setSaleStatus(sale->id, SaleStatus::Open);
        if (!started)
            return emit failed(what, started.error().message);
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

void EngineWorker::listDiscrepancies()
{
    if (!requireEngine(tr("List discrepancies")))
        return;
    auto list = m_reconciler->list();
    if (!list)
        return emit failed(tr("List discrepancies"), list.error().message);
    emit discrepanciesListed(*list);
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

void EngineWorker::resolveDiscrepancy(qint64 id, bool approve, const QString &reason)
{
    const QString what = approve ? tr("Approve discrepancy #%1").arg(id) : tr("Reject discrepancy #%1").arg(id);
    if (!requireEngine(what))
        return;
    const QStringList who = approvers();
    auto done = approve ? m_reconciler->approve(id, m_profile.operatorName, reason, who)
                        : m_reconciler->reject(id, m_profile.operatorName, reason, who);
    if (!done)
        return emit failed(what, done.error().message);
    emit discrepancyResolved(*done);
    listDiscrepancies();
}

void EngineWorker::traceDiscrepancy(const Discrepancy &d)
{
    if (!requireEngine(tr("Ledger trace")))
        return;
    auto rows = d.order.isEmpty() ? m_engine->book().ledgerOfSku(d.sku) : m_engine->book().ledgerOfOrder(d.order);
    if (!rows)
        return emit failed(tr("Ledger trace"), rows.error().message);
    emit traceReady(d.id, newest(*rows, kTraceRows));
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
    case LedgerSearchMode::Order:
        if (auto rows = book.ledgerOfOrder(text)) {
            result.rows = *rows;
            if (auto status = book.orderStatus(text); status && *status)
                result.orderStatus = orderStatusName(**status);
            if (auto refunds = book.refundCount(text))
                result.refunds = *refunds;
        } else {
            result.error = rows.error().message;
        }
        break;
    case LedgerSearchMode::Sku:
        if (auto rows = book.ledgerOfSku(text))
            result.rows = newest(*rows, kSearchRowsCap);
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

QStringList EngineWorker::approvers() const
{
    return configuredApprovers(m_profile.dataDir);
}

} // namespace flashstock
