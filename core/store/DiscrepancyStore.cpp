#include "store/DiscrepancyStore.h"

#include "Identifiers.h"
#include "store/ApproverStore.h"
#include "store/Book.h"
#include "store/Database.h"
#include "store/LedgerWindow.h"
#include "store/SqlValues.h"

#include <QHash>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QVariant nullableInt(const std::optional<qint64> &v)
{
    return v ? QVariant(*v) : QVariant(QMetaType(QMetaType::LongLong));
}

const QString kColumns = u"id, kind, sku, bucket, order_id, token, status, delta, gate_value, book_value, ledger_value, "
                         u"proposal, detail, detected_at, resolved_by, reason, correction, pauses, found_available, "
                         u"found_locked, found_sold, target_available, target_locked, target_sold, dkey, status_from, "
                         u"status_to, payment_ref, breaks, resolved_at, orders_locked, orders_sold, set_available, "
                         u"set_locked, set_sold, found_total, level"_s;

/// The level column's word: empty (never NULL) for none.
QString levelWord(DiscrepancyLevel level)
{
    return level == DiscrepancyLevel::None ? u""_s : discrepancyLevelName(level);
}

/// PostgreSQL: the advisory lock recorders take (insert), one at a time.
constexpr qint64 kRecordLock = 7305012;

/// The correction's and the finding's columns: correction (its word), found_* and target_*
/// (the bucket as found and what its ledger explained), orders_* (what its orders held),
/// set_* (the levels a MatchOrders sets), status_from and status_to, payment_ref.
struct CorrectionColumns {
    std::optional<Levels3> found;
    std::optional<Levels3> target;
    std::optional<Levels3> set;
    std::optional<qint64> total, ordersLocked, ordersSold;
    QString statusFrom, statusTo, payment;

    /// Binds for `correction, found_available, found_locked, found_sold, target_available,
    /// target_locked, target_sold, found_total, orders_locked, orders_sold, set_available,
    /// set_locked, set_sold, status_from, status_to, payment_ref`, `word` first.
    QVariantList binds(const QString &word) const
    {
        QVariantList out{nullable(word)};
        for (const std::optional<Levels3> &l : {found, target})
            out << part(l, &Levels3::available) << part(l, &Levels3::locked) << part(l, &Levels3::sold);
        out << nullableInt(total) << nullableInt(ordersLocked) << nullableInt(ordersSold);
        out << part(set, &Levels3::available) << part(set, &Levels3::locked) << part(set, &Levels3::sold);
        out << nullable(statusFrom) << nullable(statusTo) << nullable(payment);
        return out;
    }

private:
    static QVariant part(const std::optional<Levels3> &l, qint64 Levels3::*level)
    {
        return nullableInt(l ? std::optional((*l).*level) : std::nullopt);
    }
};

/// The columns binds() fills, in its order.
const QString kCorrectionColumns =
    u"correction, found_available, found_locked, found_sold, target_available, target_locked, target_sold, "
    u"found_total, orders_locked, orders_sold, set_available, set_locked, set_sold, status_from, status_to, "
    u"payment_ref"_s;

CorrectionColumns columnsOf(const Correction &c, const std::optional<BucketFigures> &figures)
{
    CorrectionColumns out;
    if (const auto seen = bucketSeen(c)) {
        out.found = seen->found;
        out.target = seen->ledger;
        if (std::holds_alternative<MatchOrders>(c))
            out.set = seen->target;
    } else if (const auto *o = std::get_if<ChangeOrderStatus>(&c)) {
        out.statusFrom = orderStatusName(o->from);
        out.statusTo = orderStatusName(o->to);
    } else if (const auto *f = std::get_if<RecordRefund>(&c)) {
        out.payment = f->payment;
    }
    if (figures) {
        out.found = figures->found;
        out.target = figures->ledger;
        out.total = figures->total;
        out.ordersLocked = figures->ordersLocked;
        out.ordersSold = figures->ordersSold;
    }
    return out;
}

std::optional<Levels3> levelsAt(const QVariantList &r, int column)
{
    if (r.at(column).isNull())
        return std::nullopt;
    return Levels3{i64(r.at(column)), i64(r.at(column + 1)), i64(r.at(column + 2))};
}

/// The correction stored in row `r` (kColumns order). A row whose columns do not make a
/// correction (a word this binary does not know) proposes none.
Correction correctionFrom(const QVariantList &r)
{
    const QString word = r.at(16).toString();
    const std::optional<Levels3> found = levelsAt(r, 18), target = levelsAt(r, 21), set = levelsAt(r, 32);
    if (word == u"restore"_s && found && target)
        return RestoreBucket{*found, *target};
    if (word == u"stocktake"_s && found && target)
        return AcceptStocktake{*found, *target};
    if (word == u"match_orders"_s && found && target && set)
        return MatchOrders{*found, *target, *set};
    if (word == u"order_status"_s) {
        const auto from = orderStatusFromName(r.at(25).toString()), to = orderStatusFromName(r.at(26).toString());
        if (from && to)
            return ChangeOrderStatus{*from, *to};
    }
    if (word == u"refund"_s && !r.at(27).toString().isEmpty())
        return RecordRefund{r.at(27).toString()};
    return std::monostate{};
}

/// A finding about a bucket (I1, I2, I4) as opposed to one about an order or a payment.
bool aboutBucket(const Discrepancy &d)
{
    return d.order.isEmpty() && d.bucket >= 0
        && (d.kind == DiscrepancyKind::BrokenBucket || d.kind == DiscrepancyKind::LedgerMismatch
            || d.kind == DiscrepancyKind::OrderLedgerMismatch);
}

/// The bucket figures stored in row `r`. Rows of earlier releases: orders unknown (-1), and
/// the total the levels' sum unless the finding was of I1 (unknown: -1).
std::optional<BucketFigures> figuresFrom(const QVariantList &r, const Discrepancy &d)
{
    const std::optional<Levels3> found = levelsAt(r, 18), ledger = levelsAt(r, 21);
    if (!aboutBucket(d) || !found || !ledger)
        return std::nullopt;
    const bool ordersKnown = !r.at(30).isNull() && !r.at(31).isNull();
    const qint64 total = !r.at(35).isNull()                     ? i64(r.at(35))
                         : d.kind == DiscrepancyKind::BrokenBucket ? -1
                                                                   : found->total();
    return BucketFigures{*found, total, *ledger, ordersKnown ? i64(r.at(30)) : -1, ordersKnown ? i64(r.at(31)) : -1};
}

DiscrepancyRow rowFrom(const QVariantList &r)
{
    DiscrepancyRow row;
    Discrepancy &d = row.d;
    d.id = i64(r.at(0));
    d.kind = discrepancyKindFromName(r.at(1).toString()).value_or(DiscrepancyKind::GateExcess);
    d.sku = r.at(2).toString();
    d.bucket = int(i64(r.at(3)));
    d.order = r.at(4).toString();
    d.token = r.at(5).toString();
    d.status = discrepancyStatusFromName(r.at(6).toString()).value_or(DiscrepancyStatus::PendingApproval);
    d.delta = i64(r.at(7));
    d.gateValue = i64(r.at(8));
    d.bookValue = i64(r.at(9));
    d.ledgerValue = i64(r.at(10));
    d.proposal = r.at(11).toString();
    d.detail = r.at(12).toString();
    d.detectedAtMs = i64(r.at(13));
    d.resolvedBy = r.at(14).toString();
    d.reason = r.at(15).toString();
    d.correction = correctionFrom(r);
    d.breaks = Invariants::fromInt(int(i64(r.at(28))));
    d.resolvedAtMs = i64(r.at(29));
    d.figures = figuresFrom(r, d);
    d.level = discrepancyLevelFromName(r.at(36).toString());
    row.pauses = i64(r.at(17)) != 0;
    row.key = r.at(24).toString();
    return row;
}

DecisionRecord decisionFrom(const QVariantList &row, int at)
{
    DecisionRecord d;
    d.decision = row.at(at).toString() == u"reject"_s ? Decision::Reject : Decision::Approve;
    d.operatorName = row.at(at + 1).toString();
    d.osUser = row.at(at + 2).toString();
    d.host = row.at(at + 3).toString();
    d.dbRole = row.at(at + 4).toString();
    d.reason = row.at(at + 5).toString();
    d.applied = row.at(at + 6).toInt() != 0;
    d.atMs = i64(row.at(at + 7));
    d.seen = row.at(at + 8).toString();
    return d;
}

const QString kDecisionColumns = u"decision, operator, os_user, host, db_role, reason, applied, decided_at, seen"_s;

/// "the SKU moved; reconcile and decide again", with what moved.
std::unexpected<Error> moved(qint64 id, const QString &what)
{
    return fail(ErrorCode::InvalidArgument,
                u"seen: the SKU moved; reconcile and decide again (discrepancy %1: %2); nothing changed"_s.arg(id).arg(
                    what),
                u"seen"_s);
}

} // namespace

DiscrepancyStore::DiscrepancyStore(Database &db)
    : m_db(db)
{
}

Result<std::optional<qint64>> DiscrepancyStore::insert(const DiscrepancyRow &row)
{
    const Discrepancy &d = row.d;
    return m_db.write<std::optional<qint64>>([&](Transaction &) -> Result<std::optional<qint64>> {
        if (m_db.dialect() == Dialect::Postgres)
            if (auto r = m_db.exec(u"SELECT pg_advisory_xact_lock(%1)"_s.arg(kRecordLock)); !r)
                return std::unexpected(r.error());
        // Known: a heal or a waiting discrepancy holds the key; a bucket finding whose bucket
        // has a discrepancy waiting updates that one.
        auto known = d.figures
            ? select(u"WHERE status = 'pending_approval' AND sku = ? AND bucket = ? AND order_id IS NULL "
                     u"AND kind IN ('broken_bucket', 'ledger_mismatch', 'order_ledger_mismatch') ORDER BY id DESC"_s,
                     {d.sku, d.bucket})
            : select(u"WHERE dkey = ? AND status IN ('auto_fixed', 'pending_approval')"_s, {row.key});
        if (!known)
            return std::unexpected(known.error());
        if (!known->isEmpty()) {
            if (d.figures)
                if (auto r = refresh(known->first().id, row); !r)
                    return std::unexpected(r.error());
            return std::optional<qint64>{};
        }
        const QVariantList correction = columnsOf(d.correction, d.figures).binds(correctionWord(d.correction));
        auto r = m_db.exec(
            u"INSERT INTO discrepancies (dkey, kind, sku, bucket, order_id, token, status, delta, gate_value, "
            u"book_value, ledger_value, breaks, pauses, proposal, detail, level, detected_at, %1) "
            u"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, %2, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            u"ON CONFLICT DO NOTHING RETURNING id"_s.arg(kCorrectionColumns, m_db.nowMsExpr()),
            QVariantList{row.key, discrepancyKindName(d.kind), d.sku, d.bucket, nullable(d.order), nullable(d.token),
                         discrepancyStatusName(d.status), d.delta, d.gateValue, d.bookValue, d.ledgerValue,
                         qint64(d.breaks.toInt()), row.pauses ? 1 : 0, d.proposal.isEmpty() ? u""_s : d.proposal,
                         d.detail.isEmpty() ? u""_s : d.detail, levelWord(d.level)}
                + correction);
        if (!r)
            return std::unexpected(r.error());
        if (r->isEmpty())
            return std::optional<qint64>{};
        return std::optional<qint64>{i64(r->first().at(0))};
    });
}

Result<void> DiscrepancyStore::refresh(qint64 id, const DiscrepancyRow &found)
{
    // Its row first: a decision under way finishes before this reads it, and one that
    // decided it leaves it as decided (this finding is then the next pass's to make again).
    auto lock = m_db.exec(u"UPDATE discrepancies SET status = status WHERE id = ? AND status = 'pending_approval'"_s,
                          {id});
    if (!lock)
        return std::unexpected(lock.error());
    if (lock->affected != 1)
        return {};
    auto read = get(id);
    if (!read)
        return std::unexpected(read.error());
    const Discrepancy &pending = (*read)->d;
    const Discrepancy &f = found.d;
    // The kind of correction proposed now (a rejection may have chosen it) where it still
    // applies to what was found; else the one the finding proposes.
    Correction next = f.correction;
    for (const Correction &c : bucketCorrections(*f.figures))
        if (correctionWord(c) == correctionWord(pending.correction))
            next = c;
    if (next == pending.correction && pending.figures == f.figures && pending.kind == f.kind)
        return {};
    const QString proposal = std::holds_alternative<std::monostate>(next) ? f.proposal
                                                                          : bucketProposal(f.sku, f.bucket, next);
    if (auto r = writeProposal(id, next, f.figures, proposal); !r)
        return r;
    auto r = m_db.exec(u"UPDATE discrepancies SET kind = ?, breaks = ?, delta = ?, book_value = ?, ledger_value = ?, "
                       u"level = ?, detail = ? WHERE id = ?"_s,
                       {discrepancyKindName(f.kind), qint64(f.breaks.toInt()), f.delta, f.bookValue, f.ledgerValue,
                        levelWord(f.level), pending.detail + u"; found again (the proposal follows): "_s + f.detail, id});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<void> DiscrepancyStore::writeProposal(qint64 id, const Correction &correction,
                                             const std::optional<BucketFigures> &figures, const QString &proposal)
{
    QString set;
    for (const QString &column : kCorrectionColumns.split(u", "_s))
        set += column + u" = ?, "_s;
    auto r = m_db.exec(u"UPDATE discrepancies SET %1proposal = ? WHERE id = ?"_s.arg(set),
                       columnsOf(correction, figures).binds(correctionWord(correction)) + QVariantList{proposal, id});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<QList<Discrepancy>> DiscrepancyStore::select(const QString &whereAndOrder, const QVariantList &args)
{
    auto r = m_db.exec(u"SELECT %1 FROM discrepancies %2"_s.arg(kColumns, whereAndOrder), args);
    if (!r)
        return std::unexpected(r.error());
    QList<Discrepancy> out;
    for (const QVariantList &row : r->rows)
        out << rowFrom(row).d;
    return out;
}

Result<QList<Discrepancy>> DiscrepancyStore::list(std::optional<DiscrepancyStatus> status)
{
    auto listed = status ? select(u"WHERE status = ? ORDER BY id DESC"_s, {discrepancyStatusName(*status)})
                         : select(u"ORDER BY id DESC"_s, {});
    if (!listed)
        return listed;
    // With their decisions: a first approval of two shows on a pending one, both approvers
    // on an approved one.
    if (auto r = attachDecisions(*listed); !r)
        return std::unexpected(r.error());
    return listed;
}

Result<QList<Discrepancy>> DiscrepancyStore::unalerted()
{
    return select(u"WHERE status = 'pending_approval' AND alerted_at IS NULL ORDER BY id"_s, {});
}

Result<bool> DiscrepancyStore::claimAlert(qint64 id, qint64 leaseMs)
{
    const QString now = m_db.nowMsExpr();
    auto r = m_db.exec(u"UPDATE discrepancies SET alert_claimed_at = %1 WHERE id = ? AND alerted_at IS NULL "
                       u"AND (alert_claimed_at IS NULL OR alert_claimed_at < %1 - ?)"_s.arg(now),
                       {id, leaseMs});
    if (!r)
        return std::unexpected(r.error());
    return r->affected == 1;
}

Result<void> DiscrepancyStore::finishAlert(qint64 id, bool delivered)
{
    auto r = delivered ? m_db.exec(u"UPDATE discrepancies SET alerted_at = %1 WHERE id = ? AND alerted_at IS NULL"_s.arg(
                                       m_db.nowMsExpr()),
                                   {id})
                       : m_db.exec(u"UPDATE discrepancies SET alert_claimed_at = NULL WHERE id = ? AND alerted_at IS NULL"_s,
                                   {id});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<std::optional<DiscrepancyRow>> DiscrepancyStore::get(qint64 id)
{
    auto r = m_db.exec(u"SELECT %1 FROM discrepancies WHERE id = ?"_s.arg(kColumns), {id});
    if (!r)
        return std::unexpected(r.error());
    if (r->isEmpty())
        return std::optional<DiscrepancyRow>{};
    DiscrepancyRow row = rowFrom(r->first());
    auto made = decisions(id);
    if (!made)
        return std::unexpected(made.error());
    row.d.decisions = *made;
    return std::optional<DiscrepancyRow>{row};
}

Result<QStringList> DiscrepancyStore::pausedSkus()
{
    auto pausing = pausingDiscrepancies();
    if (!pausing)
        return std::unexpected(pausing.error());
    return pausing->keys();
}

Result<QMap<QString, QList<qint64>>> DiscrepancyStore::pausingDiscrepancies()
{
    auto r = m_db.exec(u"SELECT sku, id FROM discrepancies WHERE status = 'pending_approval' AND pauses = 1 "
                       u"ORDER BY sku, id"_s);
    if (!r)
        return std::unexpected(r.error());
    QMap<QString, QList<qint64>> out;
    for (const QVariantList &row : r->rows)
        out[row.at(0).toString()] << i64(row.at(1));
    return out;
}

Result<bool> DiscrepancyStore::isPaused(const QString &sku)
{
    auto r = m_db.exec(u"SELECT 1 FROM discrepancies WHERE sku = ? AND status = 'pending_approval' AND pauses = 1 "
                       u"LIMIT 1"_s, {sku});
    if (!r)
        return std::unexpected(r.error());
    return !r->isEmpty();
}

Result<int> DiscrepancyStore::pendingCount()
{
    auto r = m_db.exec(u"SELECT COUNT(*) FROM discrepancies WHERE status = 'pending_approval'"_s);
    if (!r)
        return std::unexpected(r.error());
    return int(i64(r->first().at(0)));
}


Result<void> DiscrepancyStore::requireUnmoved(const Discrepancy &d)
{
    Book book(m_db, Actor{});
    if (const auto seen = bucketSeen(d.correction)) {
        // The bucket first (locked until the decision commits), then its ledger: a row that
        // commits in between has moved the bucket too, and is seen as a move.
        auto cur = book.lockBucket(d.sku, d.bucket);
        if (!cur)
            return std::unexpected(cur.error());
        if (!*cur)
            return fail(ErrorCode::InvalidArgument, u"id: bucket %1 of %2 does not exist"_s.arg(d.bucket).arg(d.sku),
                        u"id"_s);
        auto ledger = LedgerWatermark(m_db).replay(d.sku, d.bucket);
        if (!ledger)
            return std::unexpected(ledger.error());
        const Levels3 now{(*cur)->available, (*cur)->locked, (*cur)->sold};
        // A count is accepted only as it summed to its total.
        const bool counted = seen->target != seen->found || (*cur)->total == now.total();
        if (now != seen->found || *ledger != seen->ledger || !counted)
            return moved(d.id, u"%1 bucket %2 is %3 of total %4 and its ledger explains %5; the proposal was made on "
                               u"%6 and %7"_s.arg(d.sku)
                                   .arg(d.bucket)
                                   .arg(levelsText(now))
                                   .arg((*cur)->total)
                                   .arg(levelsText(*ledger), levelsText(seen->found), levelsText(seen->ledger)));
        return {};
    }
    if (const auto *c = std::get_if<ChangeOrderStatus>(&d.correction)) {
        auto status = book.orderStatus(d.order);
        if (!status)
            return std::unexpected(status.error());
        if (*status != c->from)
            return moved(d.id, u"order %1 is %2 now, not %3"_s.arg(d.order,
                                                                   *status ? orderStatusName(**status) : u"gone"_s,
                                                                   orderStatusName(c->from)));
        return {};
    }
    if (std::holds_alternative<std::monostate>(d.correction))
        return fail(ErrorCode::InvalidArgument,
                    u"id: discrepancy %1 proposes no correction to apply; reject it"_s.arg(d.id), u"id"_s);
    return {};
}

Result<QString> DiscrepancyStore::apply(const Discrepancy &d, const QString &approver, const QString &reason,
                                        const QString &source)
{
    Book book(m_db, Actor{approver, source});
    qint64 adjustment = 0;
    QString done;
    if (const auto seen = bucketSeen(d.correction)) {
        const bool counted = std::holds_alternative<AcceptStocktake>(d.correction);
        auto id = book.setBucket(d.sku, d.bucket, seen->found, seen->ledger, seen->target,
                                 counted ? u"stocktake"_s : u"correction"_s, reason);
        if (!id)
            return std::unexpected(id.error());
        adjustment = *id;
        done = counted ? u"accepted the counted %1 bucket %2 of %3 (the ledger explained %4), adjustment %5"_s
                       : u"set %1 bucket %2 from %3 to %6 (the ledger explained %4), adjustment %5"_s;
        done = done.arg(d.sku)
                   .arg(d.bucket)
                   .arg(levelsText(seen->found), levelsText(seen->ledger))
                   .arg(adjustment)
                   .arg(levelsText(seen->target));
    } else if (const auto *c = std::get_if<ChangeOrderStatus>(&d.correction)) {
        auto changed = book.changeOrderStatus(d.order, d.sku, c->from, c->to, reason);
        if (!changed)
            return std::unexpected(changed.error());
        if (!*changed)
            return moved(d.id, u"order %1 is no longer %2"_s.arg(d.order, orderStatusName(c->from)));
        adjustment = **changed;
        done = u"order %1 set from %2 to %3 as its ledger explains, adjustment %4"_s
                   .arg(d.order, orderStatusName(c->from), orderStatusName(c->to))
                   .arg(adjustment);
    } else if (const auto *f = std::get_if<RecordRefund>(&d.correction)) {
        if (auto r = book.recordRefund(d.order, f->payment, u"approved by %1: %2"_s.arg(approver, reason)); !r)
            return std::unexpected(r.error());
        done = u"refund of payment %1 on order %2 recorded"_s.arg(f->payment, d.order);
    } else {
        return fail(ErrorCode::InvalidArgument,
                    u"id: discrepancy %1 proposes no correction to apply; reject it"_s.arg(d.id), u"id"_s);
    }
    if (adjustment > 0)
        if (auto linked = book.linkAdjustment(adjustment, d.id); !linked)
            return std::unexpected(linked.error());
    return done;
}

Result<QString> DiscrepancyStore::reopenOrClose(const DiscrepancyRow &row, const QString &approver,
                                                const QString &source)
{
    const Discrepancy &d = row.d;
    if (!row.pauses)
        return u"stock untouched"_s;
    const auto reopen = [&](const QString &said) -> Result<QString> {
        auto r = m_db.exec(u"UPDATE discrepancies SET status = 'pending_approval', resolved_at = NULL, "
                           u"resolved_by = NULL, reason = NULL WHERE id = ?"_s,
                           {d.id});
        if (!r)
            return std::unexpected(r.error());
        return said;
    };
    if (const auto *c = std::get_if<ChangeOrderStatus>(&d.correction)) {
        auto status = Book(m_db, Actor{approver, source}).orderStatus(d.order);
        if (!status)
            return std::unexpected(status.error());
        if (*status != c->from)
            return u"stock untouched; order %1 is no longer %2"_s.arg(d.order, orderStatusName(c->from));
        return reopen(u"order %1 is still %2 where its ledger explains %3, so this stays open and %4 paused; the "
                      u"correction stays proposed: %5"_s.arg(d.order, orderStatusName(c->from),
                                                              orderStatusName(c->to), d.sku, d.proposal));
    }
    if (!aboutBucket(d))
        return u"stock untouched"_s;
    Book book(m_db, Actor{approver, source});
    auto cur = book.lockBucket(d.sku, d.bucket);
    if (!cur)
        return std::unexpected(cur.error());
    if (!*cur)
        return u"stock untouched; bucket %1 of %2 is gone"_s.arg(d.bucket).arg(d.sku);
    auto ledger = LedgerWatermark(m_db).replay(d.sku, d.bucket);
    if (!ledger)
        return std::unexpected(ledger.error());
    // The bucket as it is now. What its orders hold moved with its ledger rows since: only
    // order rows move locked and sold while the bucket waits on this one discrepancy.
    BucketFigures now{Levels3{(*cur)->available, (*cur)->locked, (*cur)->sold}, (*cur)->total, *ledger, -1, -1};
    if (d.figures && d.figures->ordersLocked >= 0 && d.figures->ordersSold >= 0) {
        now.ordersLocked = d.figures->ordersLocked + ledger->locked - d.figures->ledger.locked;
        now.ordersSold = d.figures->ordersSold + ledger->sold - d.figures->ledger.sold;
    }
    if (now.agree())
        return u"stock untouched; the bucket agrees with its ledger now"_s;
    // Still disagreeing: open again, the SKU stays paused, proposing the correction after
    // the rejected one (the same if no other applies).
    const QList<Correction> choices = bucketCorrections(now);
    Correction next = choices.isEmpty() ? Correction(std::monostate{}) : choices.first();
    for (qsizetype i = 0; i < choices.size(); ++i)
        if (correctionWord(choices.at(i)) == correctionWord(d.correction))
            next = choices.at((i + 1) % choices.size());
    const QString proposal = std::holds_alternative<std::monostate>(next) ? noBucketCorrection()
                                                                          : bucketProposal(d.sku, d.bucket, next);
    if (auto r = writeProposal(d.id, next, now, proposal); !r)
        return std::unexpected(r.error());
    const QString why = correctionWord(next) == correctionWord(d.correction) && choices.size() == 1
        ? u" (no other correction leaves a valid bucket whose locked and sold its orders agree with)"_s
        : QString();
    return reopen(u"the bucket still disagrees (%1 of total %2, its ledger explains %3), so this stays open and %4 "
                  u"paused; now proposed: %5%6"_s.arg(levelsText(now.found))
                      .arg(now.total)
                      .arg(levelsText(*ledger), d.sku, proposal, why));
}

Result<Signer> DiscrepancyStore::signerOf(const DecisionBy &by)
{
    Signer s{by.operatorName, by.origin.osUser, by.origin.host, {}};
    if (m_db.dialect() == Dialect::Postgres) {
        auto role = m_db.exec(u"SELECT current_user"_s);
        if (!role)
            return std::unexpected(role.error());
        s.dbRole = role->first().at(0).toString();
    }
    return s;
}

Result<void> DiscrepancyStore::recordDecision(qint64 id, Decision decision, const DecisionBy &by,
                                             const QString &reason, bool applied, const QString &seen)
{
    // The database role as the server knows it (PostgreSQL), not as the caller says.
    const QString role = m_db.dialect() == Dialect::Postgres ? u"current_user"_s : u"NULL"_s;
    auto r = m_db.exec(u"INSERT INTO discrepancy_decisions (discrepancy_id, decision, operator, os_user, host, db_role, "
                       u"reason, applied, decided_at, seen) VALUES (?, ?, ?, ?, ?, %1, ?, ?, %2, ?)"_s.arg(
                           role, m_db.nowMsExpr()),
                       {id, decision == Decision::Approve ? u"approve"_s : u"reject"_s, by.operatorName,
                        by.origin.osUser, by.origin.host, reason, applied ? 1 : 0, nullable(seen)});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<QList<DecisionRecord>> DiscrepancyStore::decisions(qint64 id)
{
    auto r = m_db.exec(u"SELECT %1 FROM discrepancy_decisions WHERE discrepancy_id = ? ORDER BY id"_s.arg(kDecisionColumns),
                       {id});
    if (!r)
        return std::unexpected(r.error());
    QList<DecisionRecord> out;
    for (const QVariantList &row : r->rows)
        out << decisionFrom(row, 0);
    return out;
}

Result<void> DiscrepancyStore::attachDecisions(QList<Discrepancy> &list)
{
    if (list.isEmpty())
        return {};
    // Decisions are people's: a few per discrepancy. One statement for the list.
    qint64 lowest = list.first().id;
    for (const Discrepancy &d : list)
        lowest = std::min(lowest, d.id);
    auto r = m_db.exec(u"SELECT discrepancy_id, %1 FROM discrepancy_decisions WHERE discrepancy_id >= ? "
                       u"ORDER BY discrepancy_id, id"_s.arg(kDecisionColumns),
                       {lowest});
    if (!r)
        return std::unexpected(r.error());
    QHash<qint64, QList<DecisionRecord>> byId;
    for (const QVariantList &row : r->rows)
        byId[i64(row.at(0))] << decisionFrom(row, 1);
    for (Discrepancy &d : list)
        d.decisions = byId.value(d.id);
    return {};
}

Result<Discrepancy> DiscrepancyStore::approve(qint64 id, const Correction &decidesOn, const DecisionBy &by,
                                              const QString &reason, const QString &source)
{
    return decide(id, Decision::Approve, decidesOn, by, reason, source);
}

Result<Discrepancy> DiscrepancyStore::reject(qint64 id, const DecisionBy &by, const QString &reason,
                                             const QString &source)
{
    return decide(id, Decision::Reject, std::monostate{}, by, reason, source);
}

Result<Discrepancy> DiscrepancyStore::decide(qint64 id, Decision decision, const Correction &decidesOn,
                                             const DecisionBy &by, const QString &reason, const QString &source)
{
    const bool approve = decision == Decision::Approve;
    const QString &approver = by.operatorName;
    bool claimed = false;
    // The answer is read in the decision's own transaction, under the row lock it took (or
    // of a row already decided, which changes no more): read after the commit, its row and
    // its decisions could straddle a concurrent decision.
    auto current = [&]() -> Result<std::optional<Discrepancy>> {
        auto row = get(id);
        if (!row)
            return std::unexpected(row.error());
        if (!*row)
            return std::optional<Discrepancy>{};
        return std::optional<Discrepancy>{(*row)->d};
    };
    auto resolved = m_db.write<std::optional<Discrepancy>>(
        [&](Transaction &tx) -> Result<std::optional<Discrepancy>> {
            claimed = false;
            // Who may decide is the book's policy, read in this transaction.
            if (auto r = ApproverStore::requireApprover(m_db, approver); !r)
                return std::unexpected(r.error());
            // Take the row first: a concurrent decision waits on it, then finds what this one did.
            auto lock = m_db.exec(u"UPDATE discrepancies SET status = status WHERE id = ? AND status = 'pending_approval'"_s,
                                  {id});
            if (!lock)
                return std::unexpected(lock.error());
            if (lock->affected != 1) {
                tx.rollbackOnly();
                return current();
            }
            auto row = get(id);
            if (!row)
                return std::unexpected(row.error());
            const Discrepancy &pending = (*row)->d;
            QString seen;
            if (approve) {
                // Exactly what the approver saw, on a book that has not moved since.
                if (decidesOn != pending.correction)
                    return fail(ErrorCode::InvalidArgument,
                                u"seen: discrepancy %1 proposes another correction now (%2); show it and decide "
                                u"again; nothing changed"_s.arg(id).arg(pending.proposal),
                                u"seen"_s);
                if (auto r = requireUnmoved(pending); !r)
                    return std::unexpected(r.error());
                seen = pending.fingerprint();
                // Four eyes, counted on what this applies: above the policy's units a second
                // approval of the same proposal, by another person, applies it; the first is
                // recorded and applies nothing.
                auto limit = m_db.exec(u"SELECT four_eyes_units FROM approval_policy WHERE id = 1"_s);
                if (!limit)
                    return std::unexpected(limit.error());
                const qint64 units = correctionUnits(pending);
                const qint64 fourEyes = limit->isEmpty() ? 0 : i64(limit->first().at(0));
                if (units > fourEyes) {
                    const DecisionRecord *first = pending.firstApproval();
                    if (!first) {
                        if (auto r = recordDecision(id, decision, by, reason, false, seen); !r)
                            return std::unexpected(r.error());
                        auto note = m_db.exec(
                            u"UPDATE discrepancies SET detail = ? WHERE id = ?"_s,
                            {pending.detail + u"; approved by %1 (%2): a correction of %3 units (above %4) waits "
                                              u"for a second, different approver"_s.arg(approver, reason,
                                                                                        QString::number(units),
                                                                                        QString::number(fourEyes)),
                             id});
                        if (!note)
                            return std::unexpected(note.error());
                        return current();
                    }
                    auto me = signerOf(by);
                    if (!me)
                        return std::unexpected(me.error());
                    if (samePerson(first->signer(), *me))
                        return fail(ErrorCode::NotPermitted,
                                    u"operator: %1 cannot give the second approval of discrepancy %2: the first came "
                                    u"from %3 (OS user %4 on %5%6), and four eyes are two people (another name from "
                                    u"the same account is the same person); a correction of %7 units (above the "
                                    u"four-eyes limit of %8) needs a second, different approver"_s
                                        .arg(quoteForMessage(approver), QString::number(id),
                                             quoteForMessage(first->operatorName), quoteForMessage(first->osUser),
                                             quoteForMessage(first->host),
                                             first->dbRole.isEmpty()
                                                 ? QString()
                                                 : u", database role "_s + quoteForMessage(first->dbRole),
                                             QString::number(units), QString::number(fourEyes)),
                                    u"operator"_s);
                }
            }
            auto claim = m_db.exec(u"UPDATE discrepancies SET status = ?, resolved_at = %1, resolved_by = ?, reason = ? "
                                   u"WHERE id = ? AND status = 'pending_approval'"_s.arg(m_db.nowMsExpr()),
                                   {discrepancyStatusName(approve ? DiscrepancyStatus::Approved
                                                                  : DiscrepancyStatus::Rejected),
                                    approver, reason, id});
            if (!claim)
                return std::unexpected(claim.error());
            claimed = true;
            auto applied = approve ? apply(pending, approver, reason, source) : reopenOrClose(**row, approver, source);
            if (!applied)
                return std::unexpected(applied.error());
            if (auto r = recordDecision(id, decision, by, reason, true, seen); !r)
                return std::unexpected(r.error());
            const QString done = (approve ? u"approved: "_s : u"rejected by %1 (%2): "_s.arg(approver, reason))
                + *applied;
            auto note = m_db.exec(u"UPDATE discrepancies SET detail = ? WHERE id = ?"_s,
                                  {pending.detail + u"; "_s + done, id});
            if (!note)
                return std::unexpected(note.error());
            return current();
        });
    if (!resolved)
        return std::unexpected(resolved.error());
    if (!*resolved)
        return fail(ErrorCode::InvalidArgument, u"id: no discrepancy %1"_s.arg(id), u"id"_s);
    const Discrepancy &d = **resolved;
    const DiscrepancyStatus wanted = approve ? DiscrepancyStatus::Approved : DiscrepancyStatus::Rejected;
    // Decided before this call: the same decision again is answered as it stands (applied
    // once); the other decision, or a discrepancy that never waited, changes nothing and says so.
    // A rejection that kept the discrepancy open, and a first of two approvals, answer it pending.
    if (!claimed && d.status != wanted && !d.awaitsSecondApprover())
        return fail(ErrorCode::InvalidArgument,
                    u"id: discrepancy %1 is %2%3; nothing changed"_s.arg(id).arg(
                        discrepancyStatusName(d.status),
                        d.resolvedBy.isEmpty() ? QString() : u" by "_s + d.resolvedBy),
                    u"id"_s);
    return d;
}

} // namespace flashstock
