#include "store/DiscrepancyStore.h"

#include "store/BookSql.h"
#include "store/Database.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

qint64 i64(const QVariant &v) { return v.toLongLong(); }
QVariant nullable(const QString &s) { return s.isEmpty() ? QVariant(QMetaType(QMetaType::QString)) : QVariant(s); }
QVariant nullableInt(const std::optional<qint64> &v)
{
    return v ? QVariant(*v) : QVariant(QMetaType(QMetaType::LongLong));
}

/// The ledger watermark as a scalar subquery (0 before the first pass).
const QString kWatermark = u"(SELECT COALESCE(MAX(value), 0) FROM reconcile_state WHERE name = 'ledger_watermark')"_s;

const QString kColumns = u"id, kind, sku, bucket, order_id, token, status, delta, gate_value, book_value, ledger_value, "
                         u"proposal, detail, detected_at, resolved_by, reason, correction, pauses, found_available, "
                         u"found_locked, found_sold, target_available, target_locked, target_sold, dkey"_s;

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
    d.correction = r.at(16).toString();
    row.pauses = i64(r.at(17)) != 0;
    if (!r.at(18).isNull())
        row.found = Levels3{i64(r.at(18)), i64(r.at(19)), i64(r.at(20))};
    if (!r.at(21).isNull())
        row.target = Levels3{i64(r.at(21)), i64(r.at(22)), i64(r.at(23))};
    row.key = r.at(24).toString();
    return row;
}

QString levelsText(const Levels3 &l)
{
    return u"%1/%2/%3"_s.arg(l.available).arg(l.locked).arg(l.sold);
}

} // namespace

DiscrepancyStore::DiscrepancyStore(Database &db)
    : m_db(db)
{
}

Result<std::optional<qint64>> DiscrepancyStore::insert(const DiscrepancyRow &row)
{
    const Discrepancy &d = row.d;
    auto r = m_db.exec(
        u"INSERT INTO discrepancies (dkey, kind, sku, bucket, order_id, token, status, delta, gate_value, book_value, "
        u"ledger_value, correction, found_available, found_locked, found_sold, target_available, target_locked, "
        u"target_sold, pauses, proposal, detail, detected_at) "
        u"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, %1) "
        u"ON CONFLICT (dkey) DO NOTHING RETURNING id"_s.arg(m_db.nowMsExpr()),
        {row.key, discrepancyKindName(d.kind), d.sku, d.bucket, nullable(d.order), nullable(d.token),
         discrepancyStatusName(d.status), d.delta, d.gateValue, d.bookValue, d.ledgerValue, nullable(d.correction),
         nullableInt(row.found ? std::optional(row.found->available) : std::nullopt),
         nullableInt(row.found ? std::optional(row.found->locked) : std::nullopt),
         nullableInt(row.found ? std::optional(row.found->sold) : std::nullopt),
         nullableInt(row.target ? std::optional(row.target->available) : std::nullopt),
         nullableInt(row.target ? std::optional(row.target->locked) : std::nullopt),
         nullableInt(row.target ? std::optional(row.target->sold) : std::nullopt), row.pauses ? 1 : 0,
         d.proposal.isEmpty() ? u""_s : d.proposal, d.detail.isEmpty() ? u""_s : d.detail});
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
    if (status)
        return select(u"WHERE status = ? ORDER BY id DESC"_s, {discrepancyStatusName(*status)});
    return select(u"ORDER BY id DESC"_s, {});
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
    return std::optional<DiscrepancyRow>{rowFrom(r->first())};
}

Result<QStringList> DiscrepancyStore::pausedSkus()
{
    auto r = m_db.exec(u"SELECT DISTINCT sku FROM discrepancies WHERE status = 'pending_approval' AND pauses = 1 "
                       u"ORDER BY sku"_s);
    if (!r)
        return std::unexpected(r.error());
    QStringList out;
    for (const QVariantList &row : r->rows)
        out << row.at(0).toString();
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

Result<QString> DiscrepancyStore::fenceOrder(const QString &order, const QString &user)
{
    auto ins = m_db.exec(u"INSERT INTO orders (order_id, user_id, status, version, created_at, close_reason) "
                         u"VALUES (?, ?, 'ABANDONED', 1, %1, 'reconcile') ON CONFLICT (order_id) DO NOTHING"_s.arg(
                             m_db.nowMsExpr()),
                         {order, nullable(user)});
    if (!ins)
        return std::unexpected(ins.error());
    auto r = m_db.exec(u"SELECT status FROM orders WHERE order_id = ?"_s, {order});
    if (!r)
        return std::unexpected(r.error());
    if (r->isEmpty())
        return fail(ErrorCode::Internal, u"order %1 is neither fenced nor present after the fence"_s.arg(order));
    return r->first().at(0).toString();
}

Result<std::optional<std::pair<QString, QString>>> DiscrepancyStore::orderOf(const QString &order, const QString &sku)
{
    auto r = m_db.exec(u"SELECT o.status, ol.token FROM orders o LEFT JOIN order_lines ol "
                       u"ON ol.order_id = o.order_id AND ol.sku = ? WHERE o.order_id = ?"_s,
                       {sku, order});
    if (!r)
        return std::unexpected(r.error());
    if (r->isEmpty())
        return std::optional<std::pair<QString, QString>>{};
    return std::optional<std::pair<QString, QString>>{
        std::pair{r->first().at(0).toString(), r->first().at(1).toString()}};
}

Result<QHash<QString, qint64>> DiscrepancyStore::bookAvailable()
{
    auto r = m_db.exec(u"SELECT sku, SUM(available) FROM buckets GROUP BY sku"_s);
    if (!r)
        return std::unexpected(r.error());
    QHash<QString, qint64> out;
    for (const QVariantList &row : r->rows)
        out.insert(row.at(0).toString(), i64(row.at(1)));
    return out;
}

Result<qint64> DiscrepancyStore::lastLedgerId(const QString &sku)
{
    auto r = m_db.exec(u"SELECT COALESCE(MAX(id), 0) FROM ledger WHERE sku = ?"_s, {sku});
    if (!r)
        return std::unexpected(r.error());
    return i64(r->first().at(0));
}

Result<qint64> DiscrepancyStore::watermark()
{
    auto r = m_db.exec(u"SELECT %1"_s.arg(kWatermark));
    if (!r)
        return std::unexpected(r.error());
    return i64(r->first().at(0));
}

QString DiscrepancyStore::ledgerWindow(qint64 after) const
{
    // The window is a primary-key range, written as a literal so the planner sees the real
    // bound (a prepared parameter or subquery made PostgreSQL plan for a third of the
    // table). SQLite: NOT INDEXED keeps it on the rowid range; a secondary index would
    // otherwise be scanned whole to save a sort. This keeps a pass at the cost of what changed.
    const QString table = m_db.dialect() == Dialect::Sqlite ? u"ledger NOT INDEXED"_s : u"ledger"_s;
    return u"%1 WHERE id > %2"_s.arg(table).arg(after);
}

Result<QList<BucketProblem>> DiscrepancyStore::bucketProblems()
{
    auto wm = watermark();
    if (!wm)
        return std::unexpected(wm.error());
    // One statement, so bucket and ledger are read from one snapshot; the window subquery
    // reads only ledger rows after the watermark (primary-key range), the rest is the
    // catalog-sized buckets and checkpoints tables.
    const QString a = u"COALESCE(c.available, 0) + COALESCE(w.da, 0)"_s;
    const QString l = u"COALESCE(c.locked, 0) + COALESCE(w.dl, 0)"_s;
    const QString s = u"COALESCE(c.sold, 0) + COALESCE(w.ds, 0)"_s;
    auto r = m_db.exec(
        u"SELECT b.sku, b.bucket, b.available, b.locked, b.sold, b.total, %1, %2, %3 FROM buckets b "
        u"LEFT JOIN reconcile_checkpoints c ON c.sku = b.sku AND c.bucket = b.bucket "
        u"LEFT JOIN (SELECT sku, bucket, SUM(delta_available) AS da, SUM(delta_locked) AS dl, SUM(delta_sold) AS ds "
        u"FROM %4 GROUP BY sku, bucket) w ON w.sku = b.sku AND w.bucket = b.bucket "
        u"WHERE b.available < 0 OR b.locked < 0 OR b.sold < 0 OR b.available + b.locked + b.sold <> b.total "
        u"OR b.available <> %1 OR b.locked <> %2 OR b.sold <> %3 ORDER BY b.sku, b.bucket"_s.arg(a, l, s, ledgerWindow(*wm)));
    if (!r)
        return std::unexpected(r.error());
    QList<BucketProblem> out;
    for (const QVariantList &row : r->rows)
        out << BucketProblem{row.at(0).toString(), int(i64(row.at(1))),
                             Levels3{i64(row.at(2)), i64(row.at(3)), i64(row.at(4))}, i64(row.at(5)),
                             Levels3{i64(row.at(6)), i64(row.at(7)), i64(row.at(8))}};
    return out;
}

Result<QList<OrderProblem>> DiscrepancyStore::orderProblems()
{
    auto wm = watermark();
    if (!wm)
        return std::unexpected(wm.error());
    auto r = m_db.exec(
        u"SELECT ol.order_id, ol.sku, ol.bucket, ol.qty, o.status, ol.token, "
        u"COALESCE(SUM(CASE WHEN l.operation = 'RESERVE' THEN 1 ELSE 0 END), 0), "
        u"COALESCE(SUM(CASE WHEN l.operation = 'CONFIRM' THEN 1 ELSE 0 END), 0), "
        u"COALESCE(SUM(CASE WHEN l.operation = 'RELEASE' THEN 1 ELSE 0 END), 0) "
        u"FROM order_lines ol JOIN orders o ON o.order_id = ol.order_id "
        u"LEFT JOIN ledger l ON l.order_id = ol.order_id AND l.sku = ol.sku AND l.bucket = ol.bucket "
        u"WHERE ol.order_id IN (SELECT order_id FROM %1 AND operation <> 'ADJUST') "
        u"GROUP BY ol.order_id, ol.sku, ol.bucket, ol.qty, o.status, ol.token ORDER BY ol.order_id, ol.sku"_s.arg(
            ledgerWindow(*wm)));
    if (!r)
        return std::unexpected(r.error());
    QList<OrderProblem> out;
    for (const QVariantList &row : r->rows) {
        const qint64 reserves = i64(row.at(6)), confirms = i64(row.at(7)), releases = i64(row.at(8));
        QString explained;
        if (reserves == 1 && confirms + releases == 0)
            explained = u"PENDING"_s;
        else if (reserves == 1 && confirms == 1 && releases == 0)
            explained = u"PAID"_s;
        else if (reserves == 1 && releases == 1 && confirms == 0)
            explained = u"CLOSED"_s;
        const QString status = row.at(4).toString();
        if (explained == status)
            continue;
        out << OrderProblem{row.at(0).toString(), row.at(1).toString(), int(i64(row.at(2))), i64(row.at(3)), status,
                            explained, row.at(5).toString()};
    }
    return out;
}

Result<QList<PaymentProblem>> DiscrepancyStore::paymentProblems()
{
    auto wm = watermark();
    if (!wm)
        return std::unexpected(wm.error());
    auto r = m_db.exec(
        u"SELECT o.order_id, MIN(ol.sku), o.payment_ref FROM orders o JOIN order_lines ol ON ol.order_id = o.order_id "
        u"WHERE o.order_id IN (SELECT order_id FROM %1 AND operation <> 'ADJUST') "
        u"AND o.status = 'CLOSED' AND o.payment_ref IS NOT NULL AND NOT EXISTS "
        u"(SELECT 1 FROM refunds r WHERE r.order_id = o.order_id AND r.payment_ref = o.payment_ref) "
        u"GROUP BY o.order_id, o.payment_ref ORDER BY o.order_id"_s.arg(ledgerWindow(*wm)));
    if (!r)
        return std::unexpected(r.error());
    QList<PaymentProblem> out;
    for (const QVariantList &row : r->rows)
        out << PaymentProblem{row.at(0).toString(), row.at(1).toString(), row.at(2).toString()};
    return out;
}

Result<qint64> DiscrepancyStore::advanceWatermark(qint64 lagMs)
{
    return m_db.write<qint64>([&](Transaction &) -> Result<qint64> {
        auto wm = watermark();
        if (!wm)
            return wm;
        auto top = m_db.exec(u"SELECT MAX(id) FROM ledger WHERE id > ? AND at < %1 - ?"_s.arg(m_db.nowMsExpr()),
                             {*wm, lagMs});
        if (!top)
            return std::unexpected(top.error());
        if (top->isEmpty() || top->first().at(0).isNull())
            return *wm;
        const qint64 next = i64(top->first().at(0));
        auto fold = m_db.exec(
            u"INSERT INTO reconcile_checkpoints (sku, bucket, available, locked, sold) "
            u"SELECT sku, bucket, SUM(delta_available), SUM(delta_locked), SUM(delta_sold) FROM %1 AND id <= ? "
            u"GROUP BY sku, bucket "
            u"ON CONFLICT (sku, bucket) DO UPDATE SET available = reconcile_checkpoints.available + excluded.available, "
            u"locked = reconcile_checkpoints.locked + excluded.locked, sold = reconcile_checkpoints.sold + excluded.sold"_s.arg(ledgerWindow(*wm)),
            {next});
        if (!fold)
            return std::unexpected(fold.error());
        auto set = m_db.exec(u"INSERT INTO reconcile_state (name, value) VALUES ('ledger_watermark', ?) "
                             u"ON CONFLICT (name) DO UPDATE SET value = excluded.value"_s,
                             {next});
        if (!set)
            return std::unexpected(set.error());
        return next;
    });
}

Result<Levels3> DiscrepancyStore::replay(const QString &sku, int bucket)
{
    auto r = m_db.exec(
        u"SELECT COALESCE((SELECT available FROM reconcile_checkpoints WHERE sku = ? AND bucket = ?), 0) + "
        u"COALESCE(SUM(delta_available), 0), "
        u"COALESCE((SELECT locked FROM reconcile_checkpoints WHERE sku = ? AND bucket = ?), 0) + "
        u"COALESCE(SUM(delta_locked), 0), "
        u"COALESCE((SELECT sold FROM reconcile_checkpoints WHERE sku = ? AND bucket = ?), 0) + "
        u"COALESCE(SUM(delta_sold), 0) "
        u"FROM ledger WHERE sku = ? AND bucket = ? AND id > %1"_s.arg(kWatermark),
        {sku, bucket, sku, bucket, sku, bucket, sku, bucket});
    if (!r)
        return std::unexpected(r.error());
    const QVariantList &row = r->first();
    return Levels3{i64(row.at(0)), i64(row.at(1)), i64(row.at(2))};
}

Result<QString> DiscrepancyStore::applyCorrection(const DiscrepancyRow &row, const QString &approver,
                                                  const QString &reason, const QString &source)
{
    const Discrepancy &d = row.d;
    const QString now = m_db.nowMsExpr();
    auto adjustment = [&](const QString &kind, qint64 units) -> Result<qint64> {
        auto ins = m_db.exec(u"INSERT INTO adjustments (sku, kind, units, reason, operator, at) "
                             u"VALUES (?, ?, ?, ?, ?, %1) RETURNING id"_s.arg(now),
                             {d.sku, kind, units, u"discrepancy %1: %2"_s.arg(d.id).arg(reason), approver});
        if (!ins)
            return std::unexpected(ins.error());
        return i64(ins->first().at(0));
    };
    auto ledgerRow = [&](qint64 adjId, const Levels3 &before, const Levels3 &after) -> Result<void> {
        auto r = m_db.exec(sql::insertLedger(now),
                           {u"adj:%1"_s.arg(adjId), u"ADJUST"_s, d.sku, d.bucket, QVariant(QMetaType(QMetaType::QString)),
                            after.available - before.available, after.locked - before.locked, after.sold - before.sold,
                            before.available, before.locked, before.sold, after.available, after.locked, after.sold,
                            approver, source});
        if (!r)
            return std::unexpected(r.error());
        return {};
    };

    if (d.correction == u"restore"_s || d.correction == u"stocktake"_s) {
        auto cur = m_db.exec(u"SELECT available, locked, sold, total FROM buckets WHERE sku = ? AND bucket = ?"_s,
                             {d.sku, d.bucket});
        if (!cur)
            return std::unexpected(cur.error());
        if (cur->isEmpty())
            return fail(ErrorCode::InvalidArgument, u"id: bucket %1 of %2 no longer exists"_s.arg(d.bucket).arg(d.sku),
                        u"id"_s);
        const Levels3 found{i64(cur->first().at(0)), i64(cur->first().at(1)), i64(cur->first().at(2))};
        const qint64 total = i64(cur->first().at(3));
        auto ledger = replay(d.sku, d.bucket);
        if (!ledger)
            return std::unexpected(ledger.error());
        const bool moved = (row.found && *row.found != found) || (row.target && *row.target != *ledger);
        const QString recheck = moved ? u"re-checked (the SKU moved since the proposal): "_s : QString();
        if (found == *ledger && total == found.total())
            return recheck + u"nothing to apply: the bucket agrees with its ledger now"_s;
        if (d.correction == u"restore"_s) {
            if (!ledger->valid())
                return fail(ErrorCode::InvalidArgument,
                            u"id: re-check: the ledger of %1 bucket %2 replays to %3, not a valid bucket; reject this "
                            u"and count the stock"_s.arg(d.sku).arg(d.bucket).arg(levelsText(*ledger)),
                            u"id"_s);
            auto upd = m_db.exec(u"UPDATE buckets SET available = ?, locked = ?, sold = ?, total = ? "
                                 u"WHERE sku = ? AND bucket = ? AND available = ? AND locked = ? AND sold = ?"_s,
                                 {ledger->available, ledger->locked, ledger->sold, ledger->total(), d.sku, d.bucket,
                                  found.available, found.locked, found.sold});
            if (!upd)
                return std::unexpected(upd.error());
            if (upd->affected != 1)
                return fail(ErrorCode::Conflict, u"bucket moved during the correction"_s);
            auto adj = adjustment(u"correction"_s, ledger->available - found.available);
            if (!adj)
                return std::unexpected(adj.error());
            // The ledger already explains the restored levels: the row records the approval
            // and the levels before and after, with zero deltas, so the replay stays exact.
            auto r = m_db.exec(sql::insertLedger(now),
                               {u"adj:%1"_s.arg(*adj), u"ADJUST"_s, d.sku, d.bucket,
                                QVariant(QMetaType(QMetaType::QString)), 0, 0, 0, found.available, found.locked,
                                found.sold, ledger->available, ledger->locked, ledger->sold, approver, source});
            if (!r)
                return std::unexpected(r.error());
            return recheck + u"restored %1 bucket %2 from %3 to %4 (available/locked/sold), adjustment %5"_s.arg(d.sku)
                                 .arg(d.bucket).arg(levelsText(found), levelsText(*ledger)).arg(*adj);
        }
        if (!found.valid() || total != found.total())
            return fail(ErrorCode::InvalidArgument,
                        u"id: re-check: %1 bucket %2 is %3 of total %4, not a figure to accept; reject this"_s
                            .arg(d.sku).arg(d.bucket).arg(levelsText(found)).arg(total),
                        u"id"_s);
        auto adj = adjustment(u"stocktake"_s, found.available - ledger->available);
        if (!adj)
            return std::unexpected(adj.error());
        if (auto r = ledgerRow(*adj, *ledger, found); !r)
            return std::unexpected(r.error());
        return recheck + u"accepted the counted %1 bucket %2 of %3 (the ledger explained %4), adjustment %5"_s
                             .arg(d.sku).arg(d.bucket).arg(levelsText(found), levelsText(*ledger)).arg(*adj);
    }
    if (d.correction.startsWith(u"order_status:"_s)) {
        const QStringList fromTo = d.correction.mid(13).split(u"->"_s);
        if (fromTo.size() != 2)
            return fail(ErrorCode::Internal, u"malformed correction %1"_s.arg(d.correction));
        auto upd = m_db.exec(u"UPDATE orders SET status = ?, version = version + 1 WHERE order_id = ? AND status = ?"_s,
                             {fromTo.at(1), d.order, fromTo.at(0)});
        if (!upd)
            return std::unexpected(upd.error());
        if (upd->affected != 1)
            return u"re-checked: order %1 is no longer %2; nothing applied"_s.arg(d.order, fromTo.at(0));
        auto adj = adjustment(u"correction"_s, 0);
        if (!adj)
            return std::unexpected(adj.error());
        return u"order %1 set from %2 to %3 as its ledger explains, adjustment %4"_s.arg(d.order, fromTo.at(0),
                                                                                       fromTo.at(1))
            .arg(*adj);
    }
    if (d.correction.startsWith(u"refund:"_s)) {
        const QString payment = d.correction.mid(7);
        auto ins = m_db.exec(u"INSERT INTO refunds (order_id, payment_ref, reason, created_at) VALUES (?, ?, ?, %1) "
                             u"ON CONFLICT (order_id, payment_ref) DO NOTHING"_s.arg(now),
                             {d.order, payment, u"approved by %1: %2"_s.arg(approver, reason)});
        if (!ins)
            return std::unexpected(ins.error());
        return u"refund of payment %1 on order %2 recorded"_s.arg(payment, d.order);
    }
    return fail(ErrorCode::InvalidArgument, u"id: discrepancy %1 proposes no correction to apply; reject it"_s.arg(d.id),
                u"id"_s);
}

Result<Discrepancy> DiscrepancyStore::resolve(qint64 id, bool approve, const QString &approver, const QString &reason,
                                              const QString &source)
{
    bool claimed = false;
    auto resolved = m_db.write<std::optional<Discrepancy>>(
        [&](Transaction &tx) -> Result<std::optional<Discrepancy>> {
            claimed = false;
            // Claim it first: a concurrent second approval waits on this row and then finds
            // it resolved, so the correction is applied once.
            auto claim = m_db.exec(u"UPDATE discrepancies SET status = ?, resolved_at = %1, resolved_by = ?, reason = ? "
                                   u"WHERE id = ? AND status = 'pending_approval'"_s.arg(m_db.nowMsExpr()),
                                   {approve ? u"approved"_s : u"rejected"_s, approver, reason, id});
            if (!claim)
                return std::unexpected(claim.error());
            if (claim->affected != 1) {
                tx.rollbackOnly();
                return std::optional<Discrepancy>{};
            }
            claimed = true;
            auto row = get(id);
            if (!row)
                return std::unexpected(row.error());
            QString done = u"rejected: stock untouched"_s;
            if (approve) {
                auto applied = applyCorrection(**row, approver, reason, source);
                if (!applied)
                    return std::unexpected(applied.error());
                done = u"approved: "_s + *applied;
            }
            auto note = m_db.exec(u"UPDATE discrepancies SET detail = ? WHERE id = ?"_s,
                                  {(*row)->d.detail + u"; "_s + done, id});
            if (!note)
                return std::unexpected(note.error());
            return std::optional<Discrepancy>{};
        });
    if (!resolved)
        return std::unexpected(resolved.error());
    auto row = get(id);
    if (!row)
        return std::unexpected(row.error());
    if (!*row)
        return fail(ErrorCode::InvalidArgument, u"id: no discrepancy %1"_s.arg(id), u"id"_s);
    const Discrepancy &d = (*row)->d;
    const DiscrepancyStatus wanted = approve ? DiscrepancyStatus::Approved : DiscrepancyStatus::Rejected;
    // Decided before this call: the same decision again is answered as it stands (applied
    // once); the other decision, or a discrepancy that never waited, changes nothing and says so.
    if (!claimed && d.status != wanted)
        return fail(ErrorCode::InvalidArgument,
                    u"id: discrepancy %1 is %2%3; nothing changed"_s.arg(id).arg(
                        discrepancyStatusName(d.status),
                        d.resolvedBy.isEmpty() ? QString() : u" by "_s + d.resolvedBy),
                    u"id"_s);
    return d;
}

} // namespace flashstock
