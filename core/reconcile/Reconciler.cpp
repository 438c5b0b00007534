// The reconciler: one pass = the book's windowed invariant checks (held for approval), then
// the gate's tokens and levels per SKU (healed). See DESIGN.md, reconciliation.

#include "reconcile/Reconciler.h"

#include "Engine.h"
#include "gate/Gate.h"
#include "store/Book.h"
#include "store/Database.h"
#include "store/DiscrepancyStore.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

struct KindName {
    DiscrepancyKind kind;
    const char16_t *name;
};
constexpr KindName kKinds[] = {
    {DiscrepancyKind::OrphanPreDeduct, u"orphan_pre_deduct"},
    {DiscrepancyKind::StaleHold, u"stale_hold"},
    {DiscrepancyKind::GateShortfall, u"gate_shortfall"},
    {DiscrepancyKind::GateExcess, u"gate_excess"},
    {DiscrepancyKind::BrokenBucket, u"broken_bucket"},
    {DiscrepancyKind::LedgerMismatch, u"ledger_mismatch"},
    {DiscrepancyKind::OrderLedgerMismatch, u"order_ledger_mismatch"},
    {DiscrepancyKind::UnrefundedPayment, u"unrefunded_payment"},
};

struct StatusName {
    DiscrepancyStatus status;
    const char16_t *name;
};
constexpr StatusName kStatuses[] = {
    {DiscrepancyStatus::AutoFixed, u"auto_fixed"},
    {DiscrepancyStatus::PendingApproval, u"pending_approval"},
    {DiscrepancyStatus::Approved, u"approved"},
    {DiscrepancyStatus::Rejected, u"rejected"},
};

QString levelsText(const Levels3 &l)
{
    return u"%1/%2/%3"_s.arg(l.available).arg(l.locked).arg(l.sold);
}

Result<void> checkApprover(const QString &approver, const QString &reason, const QStringList &approvers)
{
    if (approver.isEmpty() || !approvers.contains(approver))
        return fail(ErrorCode::NotPermitted,
                    u"operator: %1 is not on the approver list (FLASHSTOCK_APPROVERS or [approval] approvers)"_s.arg(
                        approver.isEmpty() ? u"(nobody)"_s : approver),
                    u"operator"_s);
    if (reason.trimmed().isEmpty())
        return fail(ErrorCode::InvalidArgument, u"reason: a reason is required"_s, u"reason"_s);
    return {};
}

} // namespace

QString discrepancyKindName(DiscrepancyKind kind)
{
    for (const KindName &k : kKinds)
        if (k.kind == kind)
            return QString::fromUtf16(k.name);
    return {};
}

std::optional<DiscrepancyKind> discrepancyKindFromName(const QString &name)
{
    for (const KindName &k : kKinds)
        if (name == QString::fromUtf16(k.name))
            return k.kind;
    return std::nullopt;
}

QString discrepancyStatusName(DiscrepancyStatus status)
{
    for (const StatusName &s : kStatuses)
        if (s.status == status)
            return QString::fromUtf16(s.name);
    return {};
}

std::optional<DiscrepancyStatus> discrepancyStatusFromName(const QString &name)
{
    for (const StatusName &s : kStatuses)
        if (name == QString::fromUtf16(s.name))
            return s.status;
    return std::nullopt;
}

Reconciler::Reconciler(Engine &engine)
    : m_engine(engine)
    , m_store(std::make_unique<DiscrepancyStore>(engine.database()))
{
}

Reconciler::~Reconciler() = default;

bool Reconciler::record(const DiscrepancyRow &row, ReconcileReport &report)
{
    auto id = m_store->insert(row);
    if (!id) {
        report.warnings << u"could not record %1 on %2: %3"_s.arg(row.key, row.d.sku, id.error().message);
        return false;
    }
    if (!*id)
        return false;
    Discrepancy d = row.d;
    d.id = **id;
    if (auto now = m_engine.database().nowMs())
        d.detectedAtMs = *now;
    report.discrepancies << d;
    if (d.status == DiscrepancyStatus::AutoFixed)
        ++report.autoFixed;
    else
        ++report.pendingApproval;
    return true;
}

Result<ReconcileReport> Reconciler::runPass(qint64 graceMs)
{
    ReconcileReport report;
    QList<Error> errors;
    checkBook(report, errors);
    if (!errors.isEmpty())
        return std::unexpected(errors.constFirst());

    if (Gate *gate = m_engine.gate()) {
        auto paused = m_store->pausedSkus();
        if (!paused)
            return std::unexpected(paused.error());
        auto now = gate->nowMs();
        if (!now) {
            report.warnings << u"gate unreachable, gate not reconciled: %1"_s.arg(now.error().message);
        } else {
            // Re-asserted every pass: a restarted Redis has lost its pause keys, and a gate
            // that was away when a discrepancy was resolved still has one.
            for (const QString &sku : *paused)
                if (auto r = gate->setPaused(sku, true); !r)
                    report.warnings << u"gate of %1 not paused: %2"_s.arg(sku, r.error().message);
            auto skus = m_engine.book().skus();
            if (!skus)
                return std::unexpected(skus.error());
            for (const QString &sku : *skus) {
                // Fresh per SKU, not the list above: another reconciler may have paused it
                // (or an approval unpaused it) since.
                auto pausedNow = m_store->isPaused(sku);
                if (!pausedNow) {
                    report.warnings << u"pause of %1 not read: %2"_s.arg(sku, pausedNow.error().message);
                    continue;
                }
                if (!*pausedNow)
                    if (auto r = gate->setPaused(sku, false); !r)
                        report.warnings << u"gate of %1 not unpaused: %2"_s.arg(sku, r.error().message);
                // The sale as the book holds it (a gate that missed a start, pause or stop).
                if (auto r = m_engine.syncGateSale(sku); !r)
                    report.warnings << u"sale of %1 not pushed to the gate: %2"_s.arg(sku, r.error().message);
                healGate(sku, *now, graceMs, *pausedNow, report);
            }
        }
    }

    if (auto wm = m_store->advanceWatermark(m_lagMs); !wm)
        return std::unexpected(wm.error());
    auto pending = m_store->pendingCount();
    if (!pending)
        return std::unexpected(pending.error());
    report.stillPending = *pending;
    return report;
}

void Reconciler::checkBook(ReconcileReport &report, QList<Error> &errors)
{
    auto buckets = m_store->bucketProblems();
    if (!buckets) {
        errors << buckets.error();
        return;
    }
    for (const BucketProblem &p : *buckets) {
        const bool broken = !p.found.valid() || p.found.total() != p.total;
        DiscrepancyRow row;
        Discrepancy &d = row.d;
        d.kind = broken ? DiscrepancyKind::BrokenBucket : DiscrepancyKind::LedgerMismatch;
        d.sku = p.sku;
        d.bucket = p.bucket;
        d.status = DiscrepancyStatus::PendingApproval;
        d.bookValue = p.found.available;
        d.ledgerValue = p.ledger.available;
        // The figure named: available, unless only locked or sold differ.
        const char16_t *figure = u"available";
        d.delta = p.ledger.available - p.found.available;
        if (d.delta == 0 && p.ledger.locked != p.found.locked) {
            figure = u"locked";
            d.delta = p.ledger.locked - p.found.locked;
            d.bookValue = p.found.locked;
            d.ledgerValue = p.ledger.locked;
        } else if (d.delta == 0 && p.ledger.sold != p.found.sold) {
            figure = u"sold";
            d.delta = p.ledger.sold - p.found.sold;
            d.bookValue = p.found.sold;
            d.ledgerValue = p.ledger.sold;
        }
        d.detail = u"%1 bucket %2 is %3 (available/locked/sold) of total %4; its ledger replays to %5"_s.arg(p.sku)
                       .arg(p.bucket)
                       .arg(levelsText(p.found))
                       .arg(p.total)
                       .arg(levelsText(p.ledger));
        if (p.ledger.valid()) {
            d.correction = u"restore"_s;
            d.proposal = u"restore %1 bucket %2 to what its ledger explains: %3 (%4 %5%6)"_s.arg(p.sku)
                             .arg(p.bucket)
                             .arg(levelsText(p.ledger))
                             .arg(QString::fromUtf16(figure), d.delta >= 0 ? u"+"_s : QString())
                             .arg(d.delta);
        } else if (!broken) {
            d.correction = u"stocktake"_s;
            d.proposal = u"accept the counted %1 bucket %2 of %3 as a stocktake adjustment"_s.arg(p.sku)
                             .arg(p.bucket)
                             .arg(levelsText(p.found));
        } else {
            d.proposal = u"none: neither the bucket nor its ledger is a valid state; count the stock, reject this "
                         u"and restock"_s;
        }
        // Keyed by the unexplained difference, not the levels: the same drift is one
        // discrepancy even after the SKU moves on (a rejected one is not raised again).
        const Levels3 diff{p.found.available - p.ledger.available, p.found.locked - p.ledger.locked,
                           p.found.sold - p.ledger.sold};
        row.key = u"%1:%2:%3:%4:%5"_s.arg(discrepancyKindName(d.kind), p.sku)
                      .arg(p.bucket)
                      .arg(levelsText(diff))
                      .arg(p.total - p.found.total());
        row.pauses = true;
        row.found = p.found;
        row.target = p.ledger;
        // The pause is re-asserted at the start of every pass (and the book pauses book-only
        // reserves itself), so a gate that misses it now gets it on the next one.
        if (record(row, report) && m_engine.gate())
            (void)m_engine.gate()->setPaused(p.sku, true);
    }

    auto orders = m_store->orderProblems();
    if (!orders) {
        errors << orders.error();
        return;
    }
    for (const OrderProblem &p : *orders) {
        DiscrepancyRow row;
        Discrepancy &d = row.d;
        d.kind = DiscrepancyKind::OrderLedgerMismatch;
        d.sku = p.sku;
        d.bucket = p.bucket;
        d.order = p.order;
        d.token = p.token;
        d.status = DiscrepancyStatus::PendingApproval;
        // Figure: the units the order holds locked (I4): the ledger's view minus the status's.
        const qint64 ledgerLocked = p.explained == u"PENDING"_s ? p.qty : 0;
        const qint64 statusLocked = p.status == u"PENDING"_s ? p.qty : 0;
        d.delta = ledgerLocked - statusLocked;
        d.bookValue = statusLocked;
        d.ledgerValue = ledgerLocked;
        d.detail = u"order %1 is %2 but its ledger rows on %3 bucket %4 (qty %5) explain %6"_s.arg(p.order, p.status,
                                                                                                 p.sku)
                       .arg(p.bucket)
                       .arg(p.qty)
                       .arg(p.explained.isEmpty() ? u"no valid state"_s : p.explained);
        if (!p.explained.isEmpty()) {
            d.correction = u"order_status:%1->%2"_s.arg(p.status, p.explained);
            d.proposal = u"set order %1 from %2 to %3, as its ledger explains"_s.arg(p.order, p.status, p.explained);
        } else {
            d.proposal = u"none: the order's ledger rows are not a valid history; fix by hand and reject this"_s;
        }
        row.key = u"%1:%2:%3:%4:%5->%6"_s.arg(discrepancyKindName(d.kind), p.order, p.sku)
                      .arg(p.bucket)
                      .arg(p.status, p.explained);
        row.pauses = true;
        // The pause is re-asserted at the start of every pass (and the book pauses book-only
        // reserves itself), so a gate that misses it now gets it on the next one.
        if (record(row, report) && m_engine.gate())
            (void)m_engine.gate()->setPaused(p.sku, true);
    }

    auto payments = m_store->paymentProblems();
    if (!payments) {
        errors << payments.error();
        return;
    }
    for (const PaymentProblem &p : *payments) {
        DiscrepancyRow row;
        Discrepancy &d = row.d;
        d.kind = DiscrepancyKind::UnrefundedPayment;
        d.sku = p.sku;
        d.order = p.order;
        d.status = DiscrepancyStatus::PendingApproval;
        d.delta = 1; // refund records: one is right, none was found
        d.bookValue = 0;
        d.correction = u"refund:"_s + p.payment;
        d.detail = u"payment %1 on closed order %2 has no refund record"_s.arg(p.payment, p.order);
        d.proposal = u"record the refund of payment %1 on order %2"_s.arg(p.payment, p.order);
        row.key = u"%1:%2:%3"_s.arg(discrepancyKindName(d.kind), p.order, p.payment);
        // Money, not stock: the SKU keeps selling.
        row.pauses = false;
        record(row, report);
    }
}

void Reconciler::healGate(const QString &sku, qint64 nowMs, qint64 graceMs, bool paused, ReconcileReport &report)
{
    Gate &gate = *m_engine.gate();
    auto tokens = gate.openTokens(sku);
    if (!tokens) {
        report.warnings << u"gate tokens of %1 not read: %2"_s.arg(sku, tokens.error().message);
        return;
    }
    bool inFlight = false;
    auto giveBack = [&](const GateToken &t, DiscrepancyKind kind, const QString &why) {
        DiscrepancyRow row;
        Discrepancy &d = row.d;
        d.kind = kind;
        d.sku = sku;
        d.order = t.order;
        d.token = t.token;
        d.status = DiscrepancyStatus::AutoFixed;
        d.delta = t.qty;
        d.detail = u"token %1 of order %2 (%3 units, %4) %5; its units were given back to the gate"_s.arg(
            t.token, t.order).arg(t.qty).arg(tokenStateName(t.state), why);
        row.key = u"%1:%2:%3"_s.arg(discrepancyKindName(kind), sku, t.token);
        // Recorded before the gate moves: a crash in between leaves a held token that the
        // next pass releases under the same key, never a heal nobody recorded.
        record(row, report);
        if (auto r = gate.release(sku, t.token); !r)
            report.warnings << u"token %1 of %2 not released: %3"_s.arg(t.token, sku, r.error().message);
    };

    for (const GateToken &t : *tokens) {
        auto order = m_store->orderOf(t.order, sku);
        if (!order) {
            report.warnings << order.error().message;
            inFlight = true;
            continue;
        }
        const qint64 age = nowMs - t.createdMs;
        if (!*order) {
            if (age < graceMs) {
                inFlight = true;
                continue;
            }
            // Fence first: a reserve of this order that arrives later must fail in the book,
            // not commit units the gate is about to give back.
            auto fenced = m_store->fenceOrder(t.order, t.user);
            if (!fenced) {
                report.warnings << fenced.error().message;
                inFlight = true;
                continue;
            }
            order = m_store->orderOf(t.order, sku);
            if (!order || !*order) {
                inFlight = true;
                continue;
            }
        }
        const QString status = (*order)->first;
        const QString lineToken = (*order)->second;
        if (status == u"ABANDONED"_s) {
            giveBack(t, DiscrepancyKind::OrphanPreDeduct,
                     u"had no order in the book %1 ms after the pre-deduct; the order is fenced"_s.arg(age));
        } else if (lineToken != t.token) {
            // The order is in the book under another token (a repeat's extra pre-deduct).
            if (age < graceMs)
                inFlight = true;
            else
                giveBack(t, DiscrepancyKind::OrphanPreDeduct,
                         u"is not the token order %1 holds in the book (%2)"_s.arg(t.order, lineToken));
        } else if (status == u"CLOSED"_s) {
            giveBack(t, DiscrepancyKind::StaleHold, u"belongs to an order the book has closed"_s);
        } else if (status == u"PENDING"_s || status == u"PAID"_s) {
            // A settle or mark-sold that did not reach the gate: bookkeeping, no units move,
            // so one that fails again is simply tried again by the next pass.
            if (t.state == TokenState::Held)
                (void)gate.settle(sku, t.token);
            if (status == u"PAID"_s)
                (void)gate.markSold(sku, t.token);
        }
    }
    // A paused SKU's book is disputed: its gate follows the book only after the decision.
    if (inFlight || paused)
        return;

    // Levels: only with nothing in flight, and only when the book did not move meanwhile.
    auto before = m_engine.book().levels(sku);
    auto available = gate.available(sku);
    auto again = gate.openTokens(sku);
    auto after = m_engine.book().levels(sku);
    if (!before || !available || !again || !after || before->available != after->available || *available < 0)
        return;
    for (const GateToken &t : *again)
        if (t.state == TokenState::Held)
            return;
    const qint64 book = after->available, found = *available;
    if (book == found)
        return;
    auto last = m_store->lastLedgerId(sku);
    if (!last)
        return;
    // A rebuild: absolute and net of held tokens, so two reconcilers converge on the same
    // value; the per-user counts follow too (units the gate missed, e.g. a release it could
    // not see, also left them wrong).
    auto loaded = m_engine.rebuildGate(sku);
    if (!loaded) {
        report.warnings << u"gate of %1 not reloaded: %2"_s.arg(sku, loaded.error().message);
        return;
    }
    DiscrepancyRow row;
    Discrepancy &d = row.d;
    d.kind = book > found ? DiscrepancyKind::GateShortfall : DiscrepancyKind::GateExcess;
    d.sku = sku;
    d.status = DiscrepancyStatus::AutoFixed;
    d.delta = book - found;
    d.gateValue = found;
    d.bookValue = book;
    d.detail = u"gate available %1, book available %2, nothing in flight; the gate was set to %3"_s.arg(found)
                   .arg(book)
                   .arg(*loaded);
    row.key = u"%1:%2:%3:%4:%5"_s.arg(discrepancyKindName(d.kind), sku).arg(*last).arg(found).arg(book);
    record(row, report);
}

Result<QList<Discrepancy>> Reconciler::list(std::optional<DiscrepancyStatus> status)
{
    return m_store->list(status);
}

Result<QList<Discrepancy>> Reconciler::unalerted()
{
    return m_store->unalerted();
}

Result<bool> Reconciler::claimAlert(qint64 id, qint64 leaseMs)
{
    return m_store->claimAlert(id, leaseMs);
}

Result<void> Reconciler::finishAlert(qint64 id, bool delivered)
{
    return m_store->finishAlert(id, delivered);
}

Result<Discrepancy> Reconciler::get(qint64 id)
{
    auto row = m_store->get(id);
    if (!row)
        return std::unexpected(row.error());
    if (!*row)
        return fail(ErrorCode::InvalidArgument, u"id: no discrepancy %1"_s.arg(id), u"id"_s);
    return (*row)->d;
}

void Reconciler::afterResolve(const Discrepancy &d)
{
    Gate *gate = m_engine.gate();
    if (!gate || d.status == DiscrepancyStatus::PendingApproval)
        return;
    auto paused = m_store->isPaused(d.sku);
    if (!paused || *paused)
        return;
    // Still paused: reload the gate from the corrected book (net of held tokens), then open.
    auto levels = m_engine.book().levels(d.sku);
    if (!levels)
        return;
    (void)gate->load(d.sku, levels->available, true);
    (void)gate->setPaused(d.sku, false);
}

Result<Discrepancy> Reconciler::approve(qint64 id, const QString &approver, const QString &reason,
                                        const QStringList &approvers)
{
    if (auto r = checkApprover(approver, reason, approvers); !r)
        return std::unexpected(r.error());
    auto d = m_store->resolve(id, true, approver, reason, m_engine.book().actor().source);
    if (d)
        afterResolve(*d);
    return d;
}

Result<Discrepancy> Reconciler::reject(qint64 id, const QString &approver, const QString &reason,
                                       const QStringList &approvers)
{
    if (auto r = checkApprover(approver, reason, approvers); !r)
        return std::unexpected(r.error());
    auto d = m_store->resolve(id, false, approver, reason, m_engine.book().actor().source);
    if (d)
        afterResolve(*d);
    return d;
}

} // namespace flashstock
