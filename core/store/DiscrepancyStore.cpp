#include "store/DiscrepancyStore.h"

#include "Identifiers.h"
#include "store/ApproverStore.h"
#include "store/Book.h"
#include "store/Database.h"
#include "store/LedgerWindow.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

qint64 i64(const QVariant &v) { return v.toLongLong(); }
QVariant nullable(const QString &s) { return s.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(s); }
QVariant nullableInt(const std::optional<qint64> &v)
{
    return v ? QVariant(*v) : QVariant(QMetaType(QMetaType::LongLong));
}

const QString kColumns = u"id, kind, sku, bucket, order_id, token, status, delta, gate_value, book_value, ledger_value, "
                         u"proposal, detail, detected_at, resolved_by, reason, correction, pauses, found_available, "
                         u"found_locked, found_sold, target_available, target_locked, target_sold, dkey, status_from, "
                         u"status_to, payment_ref, breaks, resolved_at, figure"_s;

/// The correction's columns: correction (its word), found_* and target_* (a bucket
/// correction's found and ledger levels), status_from and status_to, payment_ref.
struct CorrectionColumns {
    std::optional<Levels3> found;
    std::optional<Levels3> target;
    QString statusFrom, statusTo, payment;
};

CorrectionColumns columnsOf(const Correction &c)
{
    CorrectionColumns out;
    if (const auto *r = std::get_if<RestoreBucket>(&c)) {
        out.found = r->found;
        out.target = r->ledger;
    } else if (const auto *t = std::get_if<AcceptStocktake>(&c)) {
        out.found = t->found;
        out.target = t->ledger;
    } else if (const auto *o = std::get_if<ChangeOrderStatus>(&c)) {
        out.statusFrom = orderStatusName(o->from);
        out.statusTo = orderStatusName(o->to);
    } else if (const auto *f = std::get_if<RecordRefund>(&c)) {
        out.payment = f->payment;
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
    const std::optional<Levels3> found = levelsAt(r, 18), target = levelsAt(r, 21);
    if (word == u"restore"_s && found && target)
        return RestoreBucket{*found, *target};
    if (word == u"stocktake"_s && found && target)
        return AcceptStocktake{*found, *target};
    if (word == u"order_status"_s) {
        const auto from = orderStatusFromName(r.at(25).toString()), to = orderStatusFromName(r.at(26).toString());
        if (from && to)
            return ChangeOrderStatus{*from, *to};
    }
    if (word == u"refund"_s && !r.at(27).toString().isEmpty())
        return RecordRefund{r.at(27).toString()};
    return std::monostate{};
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
    d.figure = discrepancyFigureFromName(r.at(30).toString());
    row.pauses = i64(r.at(17)) != 0;
    row.key = r.at(24).toString();
    return row;
}

} // namespace

DiscrepancyStore::DiscrepancyStore(Database &db)
    : m_db(db)
{
}

Result<std::optional<qint64>> DiscrepancyStore::insert(const DiscrepancyRow &row)
{
    const Discrepancy &d = row.d;
    const CorrectionColumns c = columnsOf(d.correction);
    auto part = [](const std::optional<Levels3> &l, qint64 Levels3::*level) {
        return nullableInt(l ? std::optional((*l).*level) : std::nullopt);
    };
    auto r = m_db.exec(
        u"INSERT INTO discrepancies (dkey, kind, sku, bucket, order_id, token, status, delta, gate_value, book_value, "
        u"ledger_value, correction, found_available, found_locked, found_sold, target_available, target_locked, "
        u"target_sold, status_from, status_to, payment_ref, breaks, pauses, proposal, detail, figure, detected_at) "
        u"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, %1) "
        u"ON CONFLICT DO NOTHING RETURNING id"_s.arg(m_db.nowMsExpr()),
        {row.key, discrepancyKindName(d.kind), d.sku, d.bucket, nullable(d.order), nullable(d.token),
         discrepancyStatusName(d.status), d.delta, d.gateValue, d.bookValue, d.ledgerValue,
         nullable(correctionWord(d.correction)), part(c.found, &Levels3::available), part(c.found, &Levels3::locked),
         part(c.found, &Levels3::sold), part(c.target, &Levels3::available), part(c.target, &Levels3::locked),
         part(c.target, &Levels3::sold), nullable(c.statusFrom), nullable(c.statusTo), nullable(c.payment),
         qint64(d.breaks.toInt()), row.pauses ? 1 : 0, d.proposal.isEmpty() ? u""_s : d.proposal,
         d.detail.isEmpty() ? u""_s : d.detail,
         d.figure == DiscrepancyFigure::None ? u""_s : discrepancyFigureName(d.figure)});
    if (!r)
        return std::unexpected(r.error());
    if (r->isEmpty())
        return std::optional<qint64>{};
    return std::optional<qint64>{i64(r->first().at(0))};
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
    // The decisions of those still waiting (a first approval of two shows there).
    for (Discrepancy &d : *listed)
        if (d.status == DiscrepancyStatus::PendingApproval) {
            auto made = decisions(d.id);
            if (!made)
                return std::unexpected(made.error());
            d.decisions = *made;
        }
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

namespace {

/// Said when the bucket or its ledger moved since the proposal: what is applied is what the
/// re-check found, not the proposal's figures.
QString recheckNote(const Levels3 &proposedFound, const Levels3 &proposedLedger, const Book::BucketCorrection &now,
                    const Levels3 &ledgerNow)
{
    const bool moved = proposedFound != now.found || proposedLedger != ledgerNow;
    return moved ? u"re-checked (the SKU moved since the proposal): "_s : QString();
}

/// Applies a correction through the book, inside the decision's transaction, and says what
/// it did. Re-checked first: a bucket is read again and its ledger replayed now.
struct Apply {
    Book &book;
    LedgerWatermark &watermark;
    const Discrepancy &d;
    QString reason;       ///< for the adjustment: the approver's (it names the discrepancy itself)
    QString refundReason; ///< for the refund record: "approved by <approver>: <reason>"
    qint64 *adjustment;   ///< set to the adjustment applied, if any

    Result<QString> operator()(std::monostate) const
    {
        return fail(ErrorCode::InvalidArgument,
                    u"id: discrepancy %1 proposes no correction to apply; reject it"_s.arg(d.id), u"id"_s);
    }

    Result<QString> operator()(const RestoreBucket &c) const
    {
        return correctBucket(c.found, c.ledger, &Book::restoreBucket,
                             [&](const Book::BucketCorrection &, const Levels3 &ledger) {
                                 return u"id: re-check: the ledger of %1 bucket %2 replays to %3, not a valid bucket; "
                                        u"reject this and count the stock"_s.arg(d.sku).arg(d.bucket).arg(
                                            levelsText(ledger));
                             },
                             [&](const Book::BucketCorrection &done, const Levels3 &ledger) {
                                 return u"restored %1 bucket %2 from %3 to %4 (available/locked/sold), adjustment %5"_s
                                     .arg(d.sku)
                                     .arg(d.bucket)
                                     .arg(levelsText(done.found), levelsText(ledger))
                                     .arg(done.adjustment);
                             });
    }

    Result<QString> operator()(const AcceptStocktake &c) const
    {
        return correctBucket(c.found, c.ledger, &Book::acceptStocktake,
                             [&](const Book::BucketCorrection &done, const Levels3 &) {
                                 return u"id: re-check: %1 bucket %2 is %3 of total %4, not a figure to accept; "
                                        u"reject this"_s.arg(d.sku).arg(d.bucket).arg(levelsText(done.found)).arg(
                                            done.total);
                             },
                             [&](const Book::BucketCorrection &done, const Levels3 &ledger) {
                                 return u"accepted the counted %1 bucket %2 of %3 (the ledger explained %4), "
                                        u"adjustment %5"_s.arg(d.sku)
                                     .arg(d.bucket)
                                     .arg(levelsText(done.found), levelsText(ledger))
                                     .arg(done.adjustment);
                             });
    }

    Result<QString> operator()(const ChangeOrderStatus &c) const
    {
        auto done = book.changeOrderStatus(d.order, d.sku, c.from, c.to, reason);
        if (!done)
            return std::unexpected(done.error());
        if (!*done)
            return u"re-checked: order %1 is no longer %2; nothing applied"_s.arg(d.order, orderStatusName(c.from));
        *adjustment = **done;
        return u"order %1 set from %2 to %3 as its ledger explains, adjustment %4"_s
            .arg(d.order, orderStatusName(c.from), orderStatusName(c.to))
            .arg(**done);
    }

    Result<QString> operator()(const RecordRefund &c) const
    {
        if (auto done = book.recordRefund(d.order, c.payment, refundReason); !done)
            return std::unexpected(done.error());
        return u"refund of payment %1 on order %2 recorded"_s.arg(c.payment, d.order);
    }

    /// A bucket correction: `primitive` with the ledger replayed now; `notApplicable` and
    /// `applied` word the outcome.
    template <typename NotApplicable, typename Applied>
    Result<QString> correctBucket(const Levels3 &proposedFound, const Levels3 &proposedLedger,
                                  Result<Book::BucketCorrection> (Book::*primitive)(const QString &, int,
                                                                                    const Levels3 &, const QString &),
                                  NotApplicable notApplicable, Applied applied) const
    {
        auto ledger = watermark.replay(d.sku, d.bucket);
        if (!ledger)
            return std::unexpected(ledger.error());
        auto done = (book.*primitive)(d.sku, d.bucket, *ledger, reason);
        if (!done)
            return std::unexpected(done.error());
        const QString recheck = recheckNote(proposedFound, proposedLedger, *done, *ledger);
        switch (done->outcome) {
        case Book::BucketCorrection::Outcome::AlreadyAgrees:
            return recheck + u"nothing to apply: the bucket agrees with its ledger now"_s;
        case Book::BucketCorrection::Outcome::NotApplicable:
            return fail(ErrorCode::InvalidArgument, notApplicable(*done, *ledger), u"id"_s);
        case Book::BucketCorrection::Outcome::Applied: break;
        }
        *adjustment = done->adjustment;
        return recheck + applied(*done, *ledger);
    }
};

} // namespace

Result<QString> DiscrepancyStore::apply(const DiscrepancyRow &row, const QString &approver, const QString &reason,
                                        const QString &source)
{
    Book book(m_db, Actor{approver, source});
    LedgerWatermark watermark(m_db);
    qint64 adjustment = 0;
    auto applied = std::visit(Apply{book, watermark, row.d, reason,
                                    u"approved by %1: %2"_s.arg(approver, reason), &adjustment},
                              row.d.correction);
    if (applied && adjustment > 0)
        if (auto linked = book.linkAdjustment(adjustment, row.d.id); !linked)
            return std::unexpected(linked.error());
    return applied;
}

Result<QString> DiscrepancyStore::reject(const DiscrepancyRow &row, const QString &approver, const QString &source)
{
    const Discrepancy &d = row.d;
    if (d.kind != DiscrepancyKind::BrokenBucket && d.kind != DiscrepancyKind::LedgerMismatch)
        return u"stock untouched"_s;
    Book book(m_db, Actor{approver, source});
    LedgerWatermark watermark(m_db);
    auto ledger = watermark.replay(d.sku, d.bucket);
    if (!ledger)
        return std::unexpected(ledger.error());
    auto now = book.readForCorrection(d.sku, d.bucket, *ledger);
    if (!now)
        return std::unexpected(now.error());
    if (now->outcome == Book::BucketCorrection::Outcome::AlreadyAgrees)
        return u"stock untouched; the bucket agrees with its ledger now"_s;
    // Still disagreeing: open again, the SKU stays paused. The other correction, where it
    // applies to the bucket as it is now; else the same one, re-read.
    const bool countable = now->found.valid() && now->total == now->found.total();
    Correction next = std::monostate{};
    if (std::holds_alternative<RestoreBucket>(d.correction) && countable)
        next = AcceptStocktake{now->found, *ledger};
    else if (ledger->valid())
        next = RestoreBucket{now->found, *ledger};
    else if (countable)
        next = AcceptStocktake{now->found, *ledger};
    QString proposal = bucketProposal(d.sku, d.bucket, next);
    if (proposal.isEmpty())
        proposal = d.proposal;
    const CorrectionColumns c = columnsOf(next);
    auto part = [](const std::optional<Levels3> &l, qint64 Levels3::*level) {
        return nullableInt(l ? std::optional((*l).*level) : std::nullopt);
    };
    auto reopened = m_db.exec(
        u"UPDATE discrepancies SET status = 'pending_approval', resolved_at = NULL, resolved_by = NULL, reason = NULL, "
        u"correction = ?, found_available = ?, found_locked = ?, found_sold = ?, target_available = ?, "
        u"target_locked = ?, target_sold = ?, proposal = ? WHERE id = ?"_s,
        {nullable(correctionWord(next)), part(c.found, &Levels3::available), part(c.found, &Levels3::locked),
         part(c.found, &Levels3::sold), part(c.target, &Levels3::available), part(c.target, &Levels3::locked),
         part(c.target, &Levels3::sold), proposal, d.id});
    if (!reopened)
        return std::unexpected(reopened.error());
    return u"the bucket still disagrees with its ledger (%1 against %2), so this stays open and %3 paused; "
           u"now proposed: %4"_s.arg(levelsText(now->found), levelsText(*ledger), d.sku, proposal);
}

Result<void> DiscrepancyStore::recordDecision(qint64 id, Decision decision, const DecisionBy &by,
                                             const QString &reason, bool applied)
{
    // The database role as the server knows it (PostgreSQL), not as the caller says.
    const QString role = m_db.dialect() == Dialect::Postgres ? u"current_user"_s : u"NULL"_s;
    auto r = m_db.exec(u"INSERT INTO discrepancy_decisions (discrepancy_id, decision, operator, os_user, host, db_role, "
                       u"reason, applied, decided_at) VALUES (?, ?, ?, ?, ?, %1, ?, ?, %2)"_s.arg(role,
                                                                                              m_db.nowMsExpr()),
                       {id, decision == Decision::Approve ? u"approve"_s : u"reject"_s, by.operatorName,
                        by.origin.osUser, by.origin.host, reason, applied ? 1 : 0});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<QList<DecisionRecord>> DiscrepancyStore::decisions(qint64 id)
{
    auto r = m_db.exec(u"SELECT decision, operator, os_user, host, db_role, reason, applied, decided_at "
                       u"FROM discrepancy_decisions WHERE discrepancy_id = ? ORDER BY id"_s,
                       {id});
    if (!r)
        return std::unexpected(r.error());
    QList<DecisionRecord> out;
    for (const QVariantList &row : r->rows) {
        DecisionRecord d;
        d.decision = row.at(0).toString() == u"reject"_s ? Decision::Reject : Decision::Approve;
        d.operatorName = row.at(1).toString();
        d.osUser = row.at(2).toString();
        d.host = row.at(3).toString();
        d.dbRole = row.at(4).toString();
        d.reason = row.at(5).toString();
        d.applied = row.at(6).toInt() != 0;
        d.atMs = i64(row.at(7));
        out << d;
    }
    return out;
}

Result<Discrepancy> DiscrepancyStore::resolve(qint64 id, Decision decision, const DecisionBy &by,
                                              const QString &reason, const QString &source)
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
            if (approve) {
                // Four eyes: a correction above the policy's units needs a second, different
                // approver; the first approval is recorded and applies nothing.
                auto limit = m_db.exec(u"SELECT four_eyes_units FROM approval_policy WHERE id = 1"_s);
                if (!limit)
                    return std::unexpected(limit.error());
                const qint64 units = correctionUnits(pending);
                const qint64 fourEyes = limit->isEmpty() ? 0 : i64(limit->first().at(0));
                if (units > fourEyes) {
                    auto earlier = decisions(id);
                    if (!earlier)
                        return std::unexpected(earlier.error());
                    Discrepancy now = pending;
                    now.decisions = *earlier;
                    if (!now.awaitsSecondApprover()) {
                        if (auto r = recordDecision(id, decision, by, reason, false); !r)
                            return std::unexpected(r.error());
                        auto note = m_db.exec(
                            u"UPDATE discrepancies SET detail = ? WHERE id = ?"_s,
                            {pending.detail + u"; approved by %1 (%2): a correction of %3 units (above %4) waits "
                                              u"for a second, different approver"_s.arg(approver, reason)
                                                  .arg(units)
                                                  .arg(fourEyes),
                             id});
                        if (!note)
                            return std::unexpected(note.error());
                        return current();
                    }
                    if (now.decisions.constLast().operatorName == approver) {
                        tx.rollbackOnly();
                        return fail(ErrorCode::NotPermitted,
                                    u"operator: %1 approved discrepancy %2 already; a correction of %3 units (above "
                                    u"the four-eyes limit of %4) needs a second, different approver"_s.arg(
                                        quoteForMessage(approver))
                                        .arg(id)
                                        .arg(units)
                                        .arg(fourEyes),
                                    u"operator"_s);
                    }
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
            auto applied = approve ? apply(**row, approver, reason, source) : reject(**row, approver, source);
            if (!applied)
                return std::unexpected(applied.error());
            if (auto r = recordDecision(id, decision, by, reason, true); !r)
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
