// The reconciler: one pass = the book's invariants over the ledger window (held for
// approval), then the gate's tokens and levels per SKU (healed). See DESIGN.md, reconciliation.

#include "reconcile/Reconciler.h"

#include "Engine.h"
#include "Identifiers.h"
#include "gate/Gate.h"
#include "reconcile/Approvers.h"
#include "store/ApproverStore.h"
#include "store/Book.h"
#include "store/Database.h"
#include "store/DiscrepancyStore.h"
#include "store/Invariants.h"
#include "store/LedgerWindow.h"
#include "store/ReconcilePassStore.h"

#include <QElapsedTimer>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The decision's free text: a reason is required; both follow the one rule (length, no
/// control or bidi characters). Who may decide is the book's (DiscrepancyStore::approve).
Result<void> checkDecisionText(const QString &approver, const QString &reason)
{
    if (reason.trimmed().isEmpty())
        return fail(ErrorCode::InvalidArgument, u"reason: a reason is required"_s, u"reason"_s);
    if (auto r = checkName(approver, u"operator"_s); !r)
        return r;
    return checkName(reason, u"reason"_s, kMaxReasonLength);
}

/// A finding of the book: waits for a person and, unless it is about money only, pauses
/// the SKU.
DiscrepancyRow bookRow(DiscrepancyKind kind, const QString &sku, int bucket, Invariants breaks, bool pauses)
{
    DiscrepancyRow row;
    row.d.kind = kind;
    row.d.sku = sku;
    row.d.bucket = bucket;
    row.d.status = DiscrepancyStatus::PendingApproval;
    row.d.breaks = breaks;
    row.pauses = pauses;
    return row;
}

/// What a bucket finding saw, for choosing its correction (bucketCorrections).
BucketFigures figuresOf(const BucketFinding &p)
{
    return BucketFigures{p.found, p.total, p.ledger, p.ordersLocked, p.ordersSold};
}

/// The first correction that applies to what `row` found (its figures), and its proposal.
void propose(Discrepancy &d)
{
    d.correction = bucketCorrections(*d.figures).value(0, std::monostate{});
    d.proposal = std::holds_alternative<std::monostate>(d.correction) ? noBucketCorrection()
                                                                      : bucketProposal(d.sku, d.bucket, d.correction);
}

/// I1/I2 (and I4 when it goes with them): restore to what the ledger explains, accept the
/// counted figure, or set locked and sold as the orders hold them (bucketCorrections).
DiscrepancyRow bucketRow(const BucketFinding &p)
{
    const bool broken = p.breaks.testFlag(Invariant::I1);
    DiscrepancyRow row = bookRow(broken ? DiscrepancyKind::BrokenBucket : DiscrepancyKind::LedgerMismatch, p.sku,
                                 p.bucket, p.breaks, true);
    Discrepancy &d = row.d;
    const LevelDrift drift = levelDrift(p.found, p.ledger);
    d.level = drift.level;
    d.bookValue = drift.found;
    d.ledgerValue = drift.ledger;
    d.delta = drift.delta();
    d.detail = u"%1: %2 bucket %3 is %4 (available/locked/sold) of total %5; its ledger replays to %6; its orders "
               u"hold %7 pending and %8 paid"_s.arg(invariantNames(p.breaks), p.sku)
                   .arg(p.bucket)
                   .arg(levelsText(p.found))
                   .arg(p.total)
                   .arg(levelsText(p.ledger))
                   .arg(p.ordersLocked)
                   .arg(p.ordersSold);
    d.figures = figuresOf(p);
    propose(d);
    // Keyed by the unexplained difference, not the levels; a bucket waits on one discrepancy
    // (DiscrepancyStore::insert brings it up to date), and once decided, the same difference
    // found again is a new occurrence (DiscrepancyRow::key).
    const Levels3 diff{p.found.available - p.ledger.available, p.found.locked - p.ledger.locked,
                       p.found.sold - p.ledger.sold};
    row.key = u"%1:%2:%3:%4:%5"_s.arg(discrepancyKindName(d.kind), p.sku)
                  .arg(p.bucket)
                  .arg(levelsText(diff))
                  .arg(p.total - p.found.total());
    return row;
}

/// I4 alone: the bucket agrees with its ledger and its orders' lines with their rows, yet
/// locked or sold are not what the orders hold (an adjustment moved them): set them as the
/// orders hold them (bucketCorrections).
DiscrepancyRow ordersRow(const BucketFinding &p)
{
    DiscrepancyRow row = bookRow(DiscrepancyKind::OrderLedgerMismatch, p.sku, p.bucket, p.breaks, true);
    Discrepancy &d = row.d;
    const bool locked = p.found.locked != p.ordersLocked;
    d.bookValue = locked ? p.found.locked : p.found.sold;
    d.ledgerValue = locked ? p.ordersLocked : p.ordersSold;
    d.level = locked ? DiscrepancyLevel::Locked : DiscrepancyLevel::Sold;
    d.delta = d.ledgerValue - d.bookValue;
    d.detail = u"I4: %1 bucket %2 has locked %3 sold %4 but its orders hold %5 pending and %6 paid"_s.arg(p.sku)
                   .arg(p.bucket)
                   .arg(p.found.locked)
                   .arg(p.found.sold)
                   .arg(p.ordersLocked)
                   .arg(p.ordersSold);
    d.figures = figuresOf(p);
    propose(d);
    row.key = u"%1:%2:%3:orders:%4:%5"_s.arg(discrepancyKindName(d.kind), p.sku)
                  .arg(p.bucket)
                  .arg(p.found.locked - p.ordersLocked)
                  .arg(p.found.sold - p.ordersSold);
    return row;
}

/// I3: set the order to the status its ledger rows explain, if they explain one.
DiscrepancyRow lineRow(const OrderLineFinding &p)
{
    DiscrepancyRow row = bookRow(DiscrepancyKind::OrderLedgerMismatch, p.sku, p.bucket, Invariant::I3, true);
    Discrepancy &d = row.d;
    d.order = p.order;
    d.token = p.token;
    const QString status = orderStatusName(p.status);
    const QString explained = p.explained ? orderStatusName(*p.explained) : QString();
    // Level: the units the order holds locked (I4): the ledger's view minus the status's.
    const qint64 ledgerLocked = p.explained == OrderStatus::Pending ? p.qty : 0;
    const qint64 statusLocked = p.status == OrderStatus::Pending ? p.qty : 0;
    d.delta = ledgerLocked - statusLocked;
    d.bookValue = statusLocked;
    d.ledgerValue = ledgerLocked;
    d.level = DiscrepancyLevel::OrderLocked;
    d.detail = u"I3: order %1 is %2 but its ledger rows on %3 bucket %4 (qty %5) explain %6"_s.arg(p.order, status, p.sku)
                   .arg(p.bucket)
                   .arg(p.qty)
                   .arg(p.explained ? explained : u"no valid state"_s);
    if (p.explained) {
        d.correction = ChangeOrderStatus{p.status, *p.explained};
        d.proposal = u"set order %1 from %2 to %3, as its ledger explains"_s.arg(p.order, status, explained);
    } else {
        d.proposal = u"none: the order's ledger rows are not a valid history; fix by hand and reject this"_s;
    }
    row.key = u"%1:%2:%3:%4:%5->%6"_s.arg(discrepancyKindName(d.kind), p.order, p.sku)
                  .arg(p.bucket)
                  .arg(status, explained);
    return row;
}

/// I3: a ledger row of an order operation that no order line explains.
DiscrepancyRow strayRowRow(const StrayLedgerRow &p)
{
    DiscrepancyRow row = bookRow(DiscrepancyKind::OrderLedgerMismatch, p.sku, p.bucket, Invariant::I3, true);
    Discrepancy &d = row.d;
    d.order = p.order;
    d.delta = -1; // ledger rows of that operation without a line: none is right, one was found
    d.bookValue = 0;
    d.ledgerValue = 1;
    d.level = DiscrepancyLevel::LedgerRows;
    d.detail = u"I3: ledger %1 row of order %2 on %3 bucket %4 matches no order line"_s.arg(p.operation, p.order, p.sku)
                   .arg(p.bucket);
    d.proposal = u"none: a ledger row no order line explains; fix by hand and reject this"_s;
    row.key = u"%1:%2:%3:%4:%5:stray"_s.arg(discrepancyKindName(d.kind), p.order, p.sku).arg(p.bucket).arg(p.operation);
    return row;
}

/// I6: money, not stock, so the SKU keeps selling.
DiscrepancyRow paymentRow(const PaymentFinding &p)
{
    DiscrepancyRow row = bookRow(p.refunded ? DiscrepancyKind::StrayRefund : DiscrepancyKind::UnrefundedPayment, p.sku,
                                 -1, Invariant::I6, false);
    Discrepancy &d = row.d;
    d.order = p.order;
    d.level = DiscrepancyLevel::RefundRecords;
    if (p.refunded) {
        d.delta = -1; // refund records of the payment: none is right, one was found
        d.bookValue = 1;
        d.detail = u"I6: refund of payment %1 on order %2, which is %3 (it took or can still take that payment)"_s.arg(
            p.payment, p.order, orderStatusName(p.status));
        d.proposal = u"none: ask the payment provider whether the money went back, fix by hand and reject this"_s;
    } else {
        d.delta = 1; // refund records: one is right, none was found
        d.bookValue = 0;
        d.correction = RecordRefund{p.payment};
        d.detail = u"I6: payment %1 on closed order %2 has no refund record"_s.arg(p.payment, p.order);
        d.proposal = u"record the refund of payment %1 on order %2"_s.arg(p.payment, p.order);
    }
    row.key = u"%1:%2:%3"_s.arg(discrepancyKindName(d.kind), p.order, p.payment);
    return row;
}

/// Every finding as the discrepancy that stands for it. An I4 break of a bucket that breaks
/// nothing else goes with an I3 finding of an order line on that bucket (setting the order
/// right sets the bucket's orders right), or else stands alone.
QList<DiscrepancyRow> bookRows(const BookCheck &check)
{
    QList<DiscrepancyRow> out, lines;
    for (const OrderLineFinding &p : check.lines)
        lines << lineRow(p);
    QList<DiscrepancyRow> ordersOnly;
    for (const BucketFinding &p : check.buckets) {
        if (p.breaks & (Invariants(Invariant::I1) | Invariant::I2)) {
            out << bucketRow(p);
            continue;
        }
        auto line = std::find_if(lines.begin(), lines.end(), [&](const DiscrepancyRow &l) {
            return l.d.sku == p.sku && l.d.bucket == p.bucket;
        });
        if (line != lines.end())
            line->d.breaks |= Invariant::I4;
        else
            ordersOnly << ordersRow(p);
    }
    out << lines << ordersOnly;
    for (const StrayLedgerRow &p : check.strayRows)
        out << strayRowRow(p);
    for (const PaymentFinding &p : check.payments)
        out << paymentRow(p);
    return out;
}

} // namespace

Reconciler::Reconciler(Engine &engine)
    : m_engine(engine)
    , m_store(std::make_unique<DiscrepancyStore>(engine.database()))
    , m_watermark(std::make_unique<LedgerWatermark>(engine.database()))
{
}

Reconciler::~Reconciler() = default;

qint64 Reconciler::minSafeGraceMs()
{
    return Database::kLockWaitMs;
}

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
    QElapsedTimer took;
    took.start();
    ReconcileReport report;
    auto checkedThrough = checkBook(report);
    if (!checkedThrough)
        return std::unexpected(checkedThrough.error());
    if (auto r = checkGates(graceMs, report); !r)
        return std::unexpected(r.error());
    // Only as far as the book check read: rows written while this pass ran are the next's.
    if (auto wm = m_watermark->advance(m_lagMs, *checkedThrough); !wm)
        return std::unexpected(wm.error());
    auto pending = m_store->pendingCount();
    if (!pending)
        return std::unexpected(pending.error());
    report.stillPending = *pending;
    // In the book, so that whoever watches (any server's /metrics) sees when passes stop.
    const ReconcilePassRecord pass{0, took.elapsed(), report.autoFixed, report.pendingApproval, report.warnings.size()};
    if (auto r = ReconcilePassStore(m_engine.database()).record(pass); !r)
        report.warnings << u"this pass was not recorded in the book: "_s + r.error().message;
    return report;
}

Result<qint64> Reconciler::checkBook(ReconcileReport &report)
{
    auto window = m_watermark->window();
    if (!window)
        return std::unexpected(window.error());
    auto check = checkInvariants(m_engine.database(), *window, m_linesPerBatch);
    if (!check)
        return std::unexpected(check.error());
    report.lines = check->scan;
    for (const DiscrepancyRow &row : bookRows(*check)) {
        if (!record(row, report) || !row.pauses || !m_engine.gate())
            continue;
        if (auto r = m_engine.gate()->setPaused(row.d.sku, true); !r)
            report.warnings << u"gate of %1 not paused (the next pass pauses it): %2"_s.arg(row.d.sku,
                                                                                          r.error().message);
    }
    return check->checkedThrough;
}

Result<void> Reconciler::checkGates(qint64 graceMs, ReconcileReport &report)
{
    Gate *gate = m_engine.gate();
    if (!gate)
        return {};
    auto paused = m_store->pausedSkus();
    if (!paused)
        return std::unexpected(paused.error());
    auto now = gate->nowMs();
    if (!now) {
        report.warnings << u"gate unreachable, gate not reconciled: %1"_s.arg(now.error().message);
        return {};
    }
    // Re-asserted every pass: a restarted Redis has lost its pause keys, and a gate that was
    // away when a discrepancy was resolved still has one.
    for (const QString &sku : *paused)
        if (auto r = gate->setPaused(sku, true); !r)
            report.warnings << u"gate of %1 not paused: %2"_s.arg(sku, r.error().message);
    auto skus = m_engine.book().skus();
    if (!skus)
        return std::unexpected(skus.error());
    for (const QString &sku : *skus) {
        // Fresh per SKU, not the list above: another reconciler may have paused it (or an
        // approval unpaused it) since.
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
        const bool inFlight = healTokens(sku, *now, graceMs, report);
        // A paused SKU's book is disputed: its gate follows the book only after the decision.
        if (!inFlight && !*pausedNow)
            healLevels(sku, report);
    }
    return {};
}

void Reconciler::giveBack(const QString &sku, const GateToken &t, DiscrepancyKind kind, const QString &why,
                          ReconcileReport &report)
{
    DiscrepancyRow row;
    Discrepancy &d = row.d;
    d.kind = kind;
    d.sku = sku;
    d.order = t.order;
    d.token = t.token;
    d.status = DiscrepancyStatus::AutoFixed;
    d.delta = t.qty;
    d.detail = u"token %1 of order %2 (%3 units, %4) %5; its units were given back to the gate"_s.arg(t.token, t.order)
                   .arg(t.qty)
                   .arg(tokenStateName(t.state), why);
    row.key = u"%1:%2:%3"_s.arg(discrepancyKindName(kind), sku, t.token);
    // Recorded before the gate moves: a crash in between leaves a held token that the next
    // pass releases under the same key, never a heal nobody recorded.
    record(row, report);
    if (auto r = m_engine.gate()->release(sku, t.token); !r)
        report.warnings << u"token %1 of %2 not released: %3"_s.arg(t.token, sku, r.error().message);
}

bool Reconciler::healTokens(const QString &sku, qint64 nowMs, qint64 graceMs, ReconcileReport &report)
{
    auto tokens = m_engine.gate()->openTokens(sku);
    if (!tokens) {
        report.warnings << u"gate tokens of %1 not read: %2"_s.arg(sku, tokens.error().message);
        return true;
    }
    bool inFlight = false;
    for (const GateToken &t : *tokens)
        inFlight = healToken(sku, t, nowMs, graceMs, report) || inFlight;
    return inFlight;
}

Result<QStringList> Reconciler::resolveTokens(const QString &sku, const QStringList &tokens, qint64 graceMs,
                                              ReconcileReport &report)
{
    Gate *gate = m_engine.gate();
    if (!gate)
        return QStringList{};
    auto now = gate->nowMs();
    if (!now)
        return std::unexpected(now.error());
    auto open = gate->openTokens(sku);
    if (!open)
        return std::unexpected(open.error());
    QStringList left;
    for (const GateToken &t : *open)
        if (t.state == TokenState::Held && tokens.contains(t.token) && healToken(sku, t, *now, graceMs, report))
            left << t.token;
    return left;
}

bool Reconciler::healToken(const QString &sku, const GateToken &t, qint64 nowMs, qint64 graceMs,
                           ReconcileReport &report)
{
    Gate &gate = *m_engine.gate();
    Book &book = m_engine.book();
    auto order = book.orderOnSku(t.order, sku);
    if (!order) {
        report.warnings << order.error().message;
        return true;
    }
    const qint64 age = nowMs - t.createdMs;
    // No order, or one fenced for an earlier attempt: this token may be a retry on its
    // way to the book, so it is given the grace too.
    if (!*order || (*order)->status == OrderStatus::Abandoned) {
        if (age < graceMs)
            return true;
        // Fence this attempt first: a reserve carrying this token that arrives later must
        // fail in the book, not commit units the gate is about to give back.
        if (auto fenced = book.fenceOrder(t.order, t.user, t.token); !fenced) {
            report.warnings << fenced.error().message;
            return true;
        }
        order = book.orderOnSku(t.order, sku);
        if (!order || !*order)
            return true;
    }
    const Book::OrderOnSku &o = **order;
    if (o.status == OrderStatus::Abandoned) {
        giveBack(sku, t, DiscrepancyKind::OrphanPreDeduct,
                 u"had no order in the book %1 ms after the pre-deduct; this attempt is fenced (a retry of the "
                 u"order reserves afresh)"_s.arg(age),
                 report);
    } else if (o.token != t.token) {
        // The order is in the book under another token (a repeat's extra pre-deduct).
        if (age < graceMs)
            return true;
        giveBack(sku, t, DiscrepancyKind::OrphanPreDeduct,
                 u"is not the token order %1 holds in the book (%2)"_s.arg(t.order, o.token), report);
    } else if (o.status == OrderStatus::Closed) {
        giveBack(sku, t, DiscrepancyKind::StaleHold, u"belongs to an order the book has closed"_s, report);
    } else {
        // PENDING or PAID: a settle or mark-sold that did not reach the gate. Bookkeeping,
        // no units move; one that fails now is retried by the next pass.
        if (t.state == TokenState::Held)
            if (auto r = gate.settle(sku, t.token); !r)
                report.warnings << u"token %1 of %2 not settled: %3"_s.arg(t.token, sku, r.error().message);
        if (o.status == OrderStatus::Paid)
            if (auto r = gate.markSold(sku, t.token); !r)
                report.warnings << u"token %1 of %2 not marked sold: %3"_s.arg(t.token, sku, r.error().message);
    }
    return false;
}

void Reconciler::healLevels(const QString &sku, ReconcileReport &report)
{
    Gate &gate = *m_engine.gate();
    // Only when the book did not move meanwhile and no token is held (nothing in flight).
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
    auto last = m_engine.book().lastLedgerId(sku);
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
    d.level = DiscrepancyLevel::Available;
    d.breaks = Invariant::I5;
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

Result<Discrepancy> Reconciler::decide(qint64 id, Decision decision, const Correction &decidesOn,
                                       const DecisionBy &by, const QString &reason, const QStringList &seedApprovers)
{
    if (auto r = checkDecisionText(by.operatorName, reason); !r)
        return std::unexpected(r.error());
    if (auto policy = ApproverStore(m_engine.database()).policy(seedApprovers); !policy)
        return std::unexpected(policy.error());
    const QString &source = m_engine.book().actor().source;
    auto d = decision == Decision::Approve ? m_store->approve(id, decidesOn, by, reason, source)
                                           : m_store->reject(id, by, reason, source);
    if (d && d->status != DiscrepancyStatus::PendingApproval)
        m_engine.gateFollowsDecision(d->sku);
    return d;
}

Result<Discrepancy> Reconciler::approve(qint64 id, const Correction &decidesOn, const DecisionBy &by,
                                        const QString &reason, const QStringList &seedApprovers)
{
    return decide(id, Decision::Approve, decidesOn, by, reason, seedApprovers);
}

Result<Discrepancy> Reconciler::reject(qint64 id, const DecisionBy &by, const QString &reason,
                                       const QStringList &seedApprovers)
{
    return decide(id, Decision::Reject, std::monostate{}, by, reason, seedApprovers);
}

} // namespace flashstock
