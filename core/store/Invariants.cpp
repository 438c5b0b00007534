// The invariants I1-I4 and I6 of DESIGN.md, written once, over a ledger window.

#include "store/Invariants.h"

#include "store/Database.h"
#include "store/SqlValues.h"

#include <QHash>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// ` AND <column> IN (<orders>)`, `orders` a subquery of order ids. PostgreSQL:
/// `= ANY(ARRAY(...))`, so the planner looks those orders up by their index (with `IN (...)`
/// it estimated a seq scan of the whole table as cheaper).
QString amongOrders(Dialect dialect, const QString &column, const QString &orders)
{
    if (dialect == Dialect::Postgres)
        return u" AND %1 = ANY(ARRAY(%2))"_s.arg(column, orders);
    return u" AND %1 IN (%2)"_s.arg(column, orders);
}

/// ` AND <column> is one of the orders with rows in the window`; nothing over the whole
/// ledger.
QString ordersOfWindow(const LedgerWindow &window, Dialect dialect, const QString &column)
{
    if (window.isWhole())
        return {};
    return amongOrders(dialect, column, u"SELECT order_id FROM %1 AND operation <> 'ADJUST'"_s.arg(window.sql(dialect)));
}

/// ` AND order_id is one of the orders whose first order row of the window (RESERVE, CONFIRM
/// or RELEASE after `window.after`) has an id in (from, to]`: taking the window in id ranges,
/// each order of it is in exactly one. That first row is looked up per order by the ledger's
/// unique key (order id and operation): a scalar subquery, which PostgreSQL cannot turn into
/// an anti-join hashing every window row before the range (a pass over a long window then
/// cost its square), so a range costs its own rows.
QString ordersFirstInRange(const LedgerWindow &window, qint64 from, qint64 to, Dialect dialect)
{
    const QString orders =
        u"SELECT w.order_id FROM (SELECT * FROM %1 AND id <= %2) w WHERE w.operation <> 'ADJUST' "
        u"AND (SELECT MIN(x.id) FROM ledger x WHERE x.order_id = w.order_id "
        u"AND x.operation IN ('RESERVE', 'CONFIRM', 'RELEASE') AND x.id > %3) > %4"_s
            .arg(LedgerWindow{from}.sql(dialect), QString::number(to), QString::number(window.after),
                 QString::number(from));
    return amongOrders(dialect, u"order_id"_s, orders);
}

/// A ledger row `l` that belongs to no order line (an adjustment, or a stray row).
const QString kNoLine = u"NOT EXISTS (SELECT 1 FROM order_lines ol WHERE ol.order_id = l.order_id "
                        u"AND ol.sku = l.sku AND ol.bucket = l.bucket)"_s;

/// What an order line's rows explain: exactly one RESERVE of its qty, then nothing, one
/// CONFIRM of it or one RELEASE of it.
struct LineRows {
    qint64 qty = 0;
    qint64 reserves = 0, reserveLocked = 0, confirms = 0, confirmSold = 0, releases = 0, releaseAvailable = 0;

    std::optional<OrderStatus> explained() const
    {
        if (reserves != 1 || reserveLocked != qty)
            return std::nullopt;
        if (confirms == 0 && releases == 0)
            return OrderStatus::Pending;
        if (confirms == 1 && confirmSold == qty && releases == 0)
            return OrderStatus::Paid;
        if (releases == 1 && releaseAvailable == qty && confirms == 0)
            return OrderStatus::Closed;
        return std::nullopt;
    }
};

Result<OrderStatus> statusOf(const QVariant &v)
{
    if (auto s = orderStatusFromName(v.toString()))
        return *s;
    return fail(ErrorCode::Internal, u"an order has status %1, which the book never writes"_s.arg(v.toString()));
}

using BucketKey = std::pair<QString, int>;
/// Per bucket: what the order lines checked differ by from their status's share, as
/// locked and sold units (their rows' net minus what PENDING or PAID holds).
using LineDrift = QHash<BucketKey, std::pair<qint64, qint64>>;

/// The ledger rows `l` of the order line `ol`. The operations are all four the ledger allows,
/// listed so that the lookup is the ledger's unique key (order_id, operation, sku, bucket)
/// in full: on the order id alone SQLite (no statistics on a book nobody ANALYZEd) took the
/// SKU's index instead and read every row of the SKU for each line.
const QString kRowsOfLine = u"l.order_id = ol.order_id AND l.operation IN ('RESERVE', 'CONFIRM', 'RELEASE', 'ADJUST') "
                            u"AND l.sku = ol.sku AND l.bucket = ol.bucket"_s;

/// checkLines' work on one batch of lines (one row each, in key order).
Result<void> checkLineBatch(const SqlRows &rows, BookCheck &out, LineDrift &drift)
{
    for (const QVariantList &r : rows.rows) {
        auto status = statusOf(r.at(4));
        if (!status)
            return std::unexpected(status.error());
        const LineRows line{i64(r.at(3)), i64(r.at(6)), i64(r.at(7)), i64(r.at(8)),
                            i64(r.at(9)), i64(r.at(10)), i64(r.at(11))};
        const qint64 pending = *status == OrderStatus::Pending ? line.qty : 0;
        const qint64 paid = *status == OrderStatus::Paid ? line.qty : 0;
        if (const qint64 dl = i64(r.at(12)) - pending, ds = i64(r.at(13)) - paid; dl != 0 || ds != 0) {
            auto &d = drift[{r.at(1).toString(), r.at(2).toInt()}];
            d.first += dl;
            d.second += ds;
        }
        const auto explained = line.explained();
        if (explained == *status)
            continue;
        out.lines << OrderLineFinding{r.at(0).toString(), r.at(1).toString(), r.at(2).toInt(), line.qty, *status,
                                      explained,           r.at(5).toString(), int(line.reserves), int(line.confirms),
                                      int(line.releases)};
    }
    return {};
}

/// The order lines that `filter` (an ` AND order_id ...` clause, or nothing: every line)
/// keeps, checked in key order `linesPerBatch` a statement: each statement takes the next
/// lines first (by the order_lines key, after the last one read) and only then joins their
/// orders and aggregates their ledger rows, so a batch costs its lines.
Result<void> checkLineKeys(Database &db, const QString &filter, int linesPerBatch, BookCheck &out, LineDrift &drift)
{
    // After the last line read. Over every line a row comparison, where each batch's index
    // range starts; among given orders (looked up one by one) the same spelled out: with a row
    // comparison and `= ANY` together, PostgreSQL 15 scanned the key index from the bound to
    // its end for each order (24 s for a batch of 109 lines).
    const QString afterLast = filter.isEmpty()
        ? u"(order_id, sku, bucket) > (?, ?, CAST(? AS INTEGER))"_s
        : u"(order_id > ? OR (order_id = ? AND (sku > ? OR (sku = ? AND bucket > CAST(? AS INTEGER)))))"_s;
    const QString batchSql =
        u"SELECT ol.order_id, ol.sku, ol.bucket, ol.qty, o.status, ol.token, "
        u"COALESCE(SUM(CASE WHEN l.operation = 'RESERVE' THEN 1 ELSE 0 END), 0), "
        u"COALESCE(SUM(CASE WHEN l.operation = 'RESERVE' THEN l.delta_locked ELSE 0 END), 0), "
        u"COALESCE(SUM(CASE WHEN l.operation = 'CONFIRM' THEN 1 ELSE 0 END), 0), "
        u"COALESCE(SUM(CASE WHEN l.operation = 'CONFIRM' THEN l.delta_sold ELSE 0 END), 0), "
        u"COALESCE(SUM(CASE WHEN l.operation = 'RELEASE' THEN 1 ELSE 0 END), 0), "
        u"COALESCE(SUM(CASE WHEN l.operation = 'RELEASE' THEN l.delta_available ELSE 0 END), 0), "
        u"COALESCE(SUM(l.delta_locked), 0), COALESCE(SUM(l.delta_sold), 0) "
        u"FROM (SELECT order_id, sku, bucket, qty, token FROM order_lines WHERE %1%2 "
        u"ORDER BY order_id, sku, bucket LIMIT %3) ol "
        u"JOIN orders o ON o.order_id = ol.order_id LEFT JOIN ledger l ON %4 "
        u"GROUP BY ol.order_id, ol.sku, ol.bucket, ol.qty, o.status, ol.token "
        u"ORDER BY ol.order_id, ol.sku, ol.bucket"_s.arg(afterLast, filter, QString::number(linesPerBatch), kRowsOfLine);
    QVariantList after{u""_s, u""_s, -1}; // before every line (an order id is never empty)
    for (;;) {
        const QVariantList binds =
            filter.isEmpty() ? after : QVariantList{after.at(0), after.at(0), after.at(1), after.at(1), after.at(2)};
        auto batch = db.exec(batchSql, binds);
        if (!batch)
            return std::unexpected(batch.error());
        ++out.scan.batches;
        out.scan.lines += batch->rows.size();
        out.scan.mostHeld = std::max(out.scan.mostHeld, int(batch->rows.size()));
        if (auto r = checkLineBatch(*batch, out, drift); !r)
            return r;
        if (batch->rows.size() < linesPerBatch)
            return {};
        const QVariantList &last = batch->rows.constLast();
        after = {last.at(0).toString(), last.at(1).toString(), last.at(2).toInt()};
    }
}

/// I3 over the order lines of the window; also each bucket's line drift for I4. The whole
/// ledger: every line, in batches (checkLineKeys). A window: taken in ranges of
/// `linesPerBatch` ledger ids up to its last row when the pass began, each range's orders
/// (those first seen in it) in batches, so the pass costs the window once, however long it
/// is. Orders first seen after that last row (`out.checkedThrough`) are the next pass's: the
/// watermark never passes it, however long the pass took.
Result<void> checkLines(Database &db, const LedgerWindow &window, int linesPerBatch, BookCheck &out,
                        LineDrift &drift)
{
    auto top = db.exec(u"SELECT MAX(id) FROM ledger"_s);
    if (!top)
        return std::unexpected(top.error());
    const qint64 last = top->isEmpty() ? 0 : i64(top->first().at(0));
    out.checkedThrough = last;
    if (window.isWhole()) {
        if (auto r = checkLineKeys(db, {}, linesPerBatch, out, drift); !r)
            return r;
    } else {
        for (qint64 from = window.after; from < last; from += linesPerBatch) {
            const QString filter = ordersFirstInRange(window, from, std::min(from + linesPerBatch, last), db.dialect());
            if (auto r = checkLineKeys(db, filter, linesPerBatch, out, drift); !r)
                return r;
        }
    }

    auto stray = db.exec(u"SELECT l.order_id, l.operation, l.sku, l.bucket FROM (SELECT * FROM %1) l "
                         u"WHERE l.operation <> 'ADJUST' AND %2 ORDER BY l.id"_s.arg(window.sql(db.dialect()), kNoLine));
    if (!stray)
        return std::unexpected(stray.error());
    for (const QVariantList &r : stray->rows)
        out.strayRows << StrayLedgerRow{r.at(0).toString(), r.at(1).toString(), r.at(2).toString(), r.at(3).toInt()};
    return {};
}

/// I1, I2 and I4 over every bucket: its levels, the replay (checkpoint + window) and what
/// rows of no order line moved, read in one statement.
Result<void> checkBuckets(Database &db, const LedgerWindow &window, const LineDrift &drift, BookCheck &out)
{
    // The checkpoint's share of a figure: none over the whole ledger.
    auto base = [&](const char16_t *column) {
        return window.isWhole() ? u"0"_s : u"COALESCE(c.%1, 0)"_s.arg(QString::fromUtf16(column));
    };
    const QString checkpoints = window.isWhole()
        ? QString()
        : u"LEFT JOIN reconcile_checkpoints c ON c.sku = b.sku AND c.bucket = b.bucket "_s;
    auto rows = db.exec(
        u"SELECT b.sku, b.bucket, b.available, b.locked, b.sold, b.total, "
        u"%1 + COALESCE(w.da, 0), %2 + COALESCE(w.dl, 0), %3 + COALESCE(w.ds, 0), "
        u"%4 + COALESCE(w.ol, 0), %5 + COALESCE(w.os, 0) FROM buckets b %6"
        u"LEFT JOIN (SELECT l.sku, l.bucket, SUM(l.delta_available) AS da, SUM(l.delta_locked) AS dl, "
        u"SUM(l.delta_sold) AS ds, SUM(CASE WHEN %7 THEN l.delta_locked ELSE 0 END) AS ol, "
        u"SUM(CASE WHEN %7 THEN l.delta_sold ELSE 0 END) AS os FROM (SELECT * FROM %8) l "
        u"GROUP BY l.sku, l.bucket) w ON w.sku = b.sku AND w.bucket = b.bucket "
        u"ORDER BY b.sku, b.bucket"_s.arg(base(u"available"), base(u"locked"), base(u"sold"), base(u"other_locked"),
                                          base(u"other_sold"), checkpoints, kNoLine, window.sql(db.dialect())));
    if (!rows)
        return std::unexpected(rows.error());
    for (const QVariantList &r : rows->rows) {
        BucketFinding b;
        b.sku = r.at(0).toString();
        b.bucket = r.at(1).toInt();
        b.found = Levels3{i64(r.at(2)), i64(r.at(3)), i64(r.at(4))};
        b.total = i64(r.at(5));
        b.ledger = Levels3{i64(r.at(6)), i64(r.at(7)), i64(r.at(8))};
        // The orders' side of I4: the replay, less what rows of no order line moved, less the
        // lines whose status does not hold what their rows net to.
        const auto lines = drift.value({b.sku, b.bucket});
        b.ordersLocked = b.ledger.locked - i64(r.at(9)) - lines.first;
        b.ordersSold = b.ledger.sold - i64(r.at(10)) - lines.second;
        if (!b.found.valid() || b.found.total() != b.total)
            b.breaks |= Invariant::I1;
        if (b.found != b.ledger)
            b.breaks |= Invariant::I2;
        if (b.found.locked != b.ordersLocked || b.found.sold != b.ordersSold)
            b.breaks |= Invariant::I4;
        if (b.breaks)
            out.buckets << b;
    }
    return {};
}

/// I6 over the orders of the window: a payment a CLOSED order holds has its refund record;
/// no refund record of a payment the order took or can still take.
Result<void> checkPayments(Database &db, const LedgerWindow &window, BookCheck &out)
{
    const QString firstSku = u"(SELECT MIN(x.sku) FROM order_lines x WHERE x.order_id = o.order_id)"_s;
    auto rows = db.exec(
        u"SELECT o.order_id, %1, o.payment_ref, o.status, 0 FROM orders o WHERE o.status = 'CLOSED' "
        u"AND o.payment_ref IS NOT NULL AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.order_id = o.order_id "
        u"AND r.payment_ref = o.payment_ref)%2 "
        u"UNION ALL "
        u"SELECT o.order_id, %1, r.payment_ref, o.status, 1 FROM refunds r JOIN orders o ON o.order_id = r.order_id "
        u"WHERE (o.status = 'PENDING' OR (o.status = 'PAID' AND o.payment_ref = r.payment_ref))%3 "
        u"ORDER BY 1, 3"_s.arg(firstSku, ordersOfWindow(window, db.dialect(), u"o.order_id"_s),
                               ordersOfWindow(window, db.dialect(), u"r.order_id"_s)));
    if (!rows)
        return std::unexpected(rows.error());
    for (const QVariantList &r : rows->rows) {
        auto status = statusOf(r.at(3));
        if (!status)
            return std::unexpected(status.error());
        out.payments << PaymentFinding{r.at(0).toString(), r.at(1).toString(), r.at(2).toString(), *status,
                                       i64(r.at(4)) != 0};
    }
    return {};
}

} // namespace

Result<BookCheck> checkInvariants(Database &db, const LedgerWindow &window, int linesPerBatch)
{
    if (linesPerBatch < 1)
        return fail(ErrorCode::InvalidArgument, u"lines per batch must be at least 1, got %1"_s.arg(linesPerBatch),
                    u"lines_per_batch"_s);
    BookCheck out;
    LineDrift drift;
    if (auto r = checkLines(db, window, linesPerBatch, out, drift); !r)
        return std::unexpected(r.error());
    if (auto r = checkBuckets(db, window, drift, out); !r)
        return std::unexpected(r.error());
    if (auto r = checkPayments(db, window, out); !r)
        return std::unexpected(r.error());
    return out;
}

bool BookCheck::holds(Invariant invariant) const
{
    switch (invariant) {
    case Invariant::I1:
    case Invariant::I2:
    case Invariant::I4:
        return std::none_of(buckets.cbegin(), buckets.cend(),
                            [&](const BucketFinding &b) { return b.breaks.testFlag(invariant); });
    case Invariant::I3: return lines.isEmpty() && strayRows.isEmpty();
    case Invariant::I5: return true;
    case Invariant::I6: return payments.isEmpty();
    }
    return true;
}

BookCheck BookCheck::ofSku(const QString &sku) const
{
    auto only = [&](const auto &list) {
        std::remove_cvref_t<decltype(list)> out;
        std::copy_if(list.cbegin(), list.cend(), std::back_inserter(out), [&](const auto &f) { return f.sku == sku; });
        return out;
    };
    return {only(buckets), only(lines), only(strayRows), only(payments), scan, checkedThrough};
}

bool BookCheck::ok() const
{
    return buckets.isEmpty() && lines.isEmpty() && strayRows.isEmpty() && payments.isEmpty();
}

QStringList BookCheck::problems() const
{
    QStringList out;
    for (const BucketFinding &b : buckets) {
        if (b.breaks.testFlag(Invariant::I1))
            out << u"I1: %1 bucket %2 has available %3 locked %4 sold %5 total %6"_s.arg(b.sku)
                       .arg(b.bucket)
                       .arg(b.found.available)
                       .arg(b.found.locked)
                       .arg(b.found.sold)
                       .arg(b.total);
        if (b.breaks.testFlag(Invariant::I2))
            out << u"I2: %1 bucket %2 is %3 (available/locked/sold) but its ledger replays to %4"_s.arg(b.sku)
                       .arg(b.bucket)
                       .arg(levelsText(b.found), levelsText(b.ledger));
        if (b.breaks.testFlag(Invariant::I4))
            out << u"I4: %1 bucket %2 has locked %3 sold %4 but its orders hold %5 pending and %6 paid"_s.arg(b.sku)
                       .arg(b.bucket)
                       .arg(b.found.locked)
                       .arg(b.found.sold)
                       .arg(b.ordersLocked)
                       .arg(b.ordersSold);
    }
    for (const OrderLineFinding &l : lines)
        out << u"I3: order %1 (%2) line %3 bucket %4 qty %5 has %6 RESERVE, %7 CONFIRM, %8 RELEASE rows"_s
                   .arg(l.order, orderStatusName(l.status), l.sku)
                   .arg(l.bucket)
                   .arg(l.qty)
                   .arg(l.reserves)
                   .arg(l.confirms)
                   .arg(l.releases);
    for (const StrayLedgerRow &r : strayRows)
        out << u"I3: ledger %1 row of order %2 on %3 bucket %4 matches no order line"_s.arg(r.operation, r.order, r.sku)
                   .arg(r.bucket);
    for (const PaymentFinding &p : payments) {
        if (p.refunded)
            out << u"I6: refund of payment %1 on order %2 which is %3"_s.arg(p.payment, p.order,
                                                                           orderStatusName(p.status));
        else
            out << u"I6: payment %1 on closed order %2 has no refund record"_s.arg(p.payment, p.order);
    }
    return out;
}

QSet<InvariantBreach> BookCheck::breaches() const
{
    QSet<InvariantBreach> out;
    for (const BucketFinding &b : buckets)
        for (Invariant i : kInvariants)
            if (b.breaks.testFlag(i))
                out.insert(InvariantBreach::at(i, b.sku, b.bucket, {}));
    for (const OrderLineFinding &l : lines)
        out.insert(InvariantBreach::at(Invariant::I3, l.sku, l.bucket, l.order));
    for (const StrayLedgerRow &r : strayRows)
        out.insert(InvariantBreach::at(Invariant::I3, r.sku, r.bucket, r.order));
    for (const PaymentFinding &p : payments)
        out.insert(InvariantBreach::at(Invariant::I6, p.sku, -1, p.order));
    return out;
}

} // namespace flashstock
