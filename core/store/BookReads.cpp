// Book: reads of the book of record (levels, ledger traces, order status, counts).

#include "store/Book.h"

#include "Identifiers.h"
#include "store/BookRows.h"
#include "store/Database.h"
#include "store/SqlValues.h"

using namespace Qt::StringLiterals;

namespace flashstock {

// --- reads -------------------------------------------------------------------------------

Result<SkuLevels> Book::levels(const QString &sku)
{
    if (auto r = checkSkuId(sku); !r)
        return std::unexpected(r.error());
    auto rows = m_db.exec(u"SELECT bucket, available, locked, sold, total FROM buckets WHERE sku = ? ORDER BY bucket"_s,
                          {sku});
    if (!rows)
        return std::unexpected(rows.error());
    if (rows->isEmpty())
        return fail(ErrorCode::InvalidArgument, u"sku %1 is unknown"_s.arg(quoteForMessage(sku)), u"sku"_s);
    SkuLevels out;
    out.sku = sku;
    for (const QVariantList &row : rows->rows) {
        const BucketLevels b = levelsFrom(row, row.at(0).toInt(), 1);
        out.available += b.available;
        out.locked += b.locked;
        out.sold += b.sold;
        out.total += b.total;
        out.buckets << b;
    }
    return out;
}

Result<Book::RestoreView> Book::restoreView(const QString &sku, const QStringList &tokens)
{
    if (auto r = checkSkuId(sku); !r)
        return std::unexpected(r.error());
    return m_db.write<RestoreView>([&](Transaction &tx) -> Result<RestoreView> {
        tx.rollbackOnly(); // a read: nothing to commit
        const QString lock = m_db.dialect() == Dialect::Postgres ? u" FOR UPDATE"_s : QString();
        auto rows = m_db.exec(u"SELECT available FROM buckets WHERE sku = ? ORDER BY bucket"_s + lock, {sku});
        if (!rows)
            return std::unexpected(rows.error());
        if (rows->isEmpty())
            return fail(ErrorCode::InvalidArgument, u"sku %1 is unknown"_s.arg(quoteForMessage(sku)), u"sku"_s);
        RestoreView out;
        for (const QVariantList &row : rows->rows)
            out.available += i64(row.at(0));
        // Tokens a chunk at a time, each statement of one shape (one prepared statement): a
        // short chunk is padded with "", which no line carries.
        constexpr qsizetype kChunk = 200;
        static const QString kLive = u"SELECT ol.token FROM order_lines ol JOIN orders o ON o.order_id = ol.order_id "
                                     u"WHERE ol.sku = ? AND o.status IN ('PENDING', 'PAID') AND ol.token IN (%1)"_s.arg(
                                         QStringList(kChunk, u"?"_s).join(u", "_s));
        for (qsizetype i = 0; i < tokens.size(); i += kChunk) {
            QVariantList binds{sku};
            for (qsizetype j = i; j < i + kChunk; ++j)
                binds << (j < tokens.size() ? tokens.at(j) : QString(u""_s));
            auto live = m_db.exec(kLive, binds);
            if (!live)
                return std::unexpected(live.error());
            for (const QVariantList &row : live->rows)
                out.booked << row.at(0).toString();
        }
        return out;
    });
}

Result<QStringList> Book::skus()
{
    auto rows = m_db.exec(u"SELECT sku FROM skus ORDER BY sku"_s);
    if (!rows)
        return std::unexpected(rows.error());
    QStringList out;
    for (const QVariantList &row : rows->rows)
        out << row.at(0).toString();
    return out;
}

Result<QList<SkuLevels>> Book::allLevels()
{
    auto rows = m_db.exec(u"SELECT sku, bucket, available, locked, sold, total FROM buckets ORDER BY sku, bucket"_s);
    if (!rows)
        return std::unexpected(rows.error());
    QList<SkuLevels> out;
    for (const QVariantList &row : rows->rows) {
        const QString sku = row.at(0).toString();
        if (out.isEmpty() || out.last().sku != sku)
            out << SkuLevels{sku, 0, 0, 0, 0, {}};
        SkuLevels &s = out.last();
        const BucketLevels b = levelsFrom(row, row.at(1).toInt(), 2);
        s.available += b.available;
        s.locked += b.locked;
        s.sold += b.sold;
        s.total += b.total;
        s.buckets << b;
    }
    return out;
}

namespace {

const QString kLedgerColumns =
    u"l.id, l.order_id, l.operation, l.sku, l.bucket, l.token, l.delta_available, l.delta_locked, l.delta_sold, "
    u"l.available_before, l.locked_before, l.sold_before, l.available_after, l.locked_after, l.sold_after, l.at, "
    u"l.operator, l.source, a.kind, a.units, a.reason, a.discrepancy_id"_s;

/// Ledger rows `l` with the adjustment an ADJUST row belongs to (`adj:<id>`), one lookup by
/// its primary key; the CASE keeps the cast away from order ids.
const QString kWithAdjustments =
    u" LEFT JOIN adjustments a ON a.id = CASE WHEN l.operation = 'ADJUST' AND l.order_id LIKE 'adj:%' "
    u"THEN CAST(substr(l.order_id, 5) AS BIGINT) END"_s;

QList<LedgerRow> ledgerRows(const SqlRows &rows)
{
    QList<LedgerRow> out;
    out.reserve(rows.rows.size());
    for (const QVariantList &r : rows.rows) {
        LedgerRow l;
        l.id = i64(r.at(0));
        l.order = r.at(1).toString();
        l.operation = r.at(2).toString();
        l.sku = r.at(3).toString();
        l.bucket = r.at(4).toInt();
        l.token = r.at(5).toString();
        l.deltaAvailable = i64(r.at(6));
        l.deltaLocked = i64(r.at(7));
        l.deltaSold = i64(r.at(8));
        l.before = BucketLevels{l.bucket, i64(r.at(9)), i64(r.at(10)), i64(r.at(11)), 0};
        l.before.total = l.before.available + l.before.locked + l.before.sold;
        l.after = BucketLevels{l.bucket, i64(r.at(12)), i64(r.at(13)), i64(r.at(14)), 0};
        l.after.total = l.after.available + l.after.locked + l.after.sold;
        l.atMs = i64(r.at(15));
        l.operatorName = r.at(16).toString();
        l.source = r.at(17).toString();
        l.adjustmentKind = r.at(18).toString();
        l.adjustmentUnits = i64(r.at(19));
        l.reason = r.at(20).toString();
        l.discrepancy = i64(r.at(21));
        out << l;
    }
    return out;
}

} // namespace

Result<QList<LedgerRow>> Book::ledgerOfSku(const QString &sku, int limit, int bucket)
{
    if (auto r = checkSkuId(sku); !r)
        return std::unexpected(r.error());
    if (auto n = bucketCount(sku); !n)
        return std::unexpected(n.error());
    const QString &join = kWithAdjustments;
    // bucket -1 matches every bucket (buckets are >= 0).
    auto rows = limit > 0
        ? m_db.exec(u"SELECT %1 FROM (SELECT * FROM ledger WHERE sku = ? AND (? < 0 OR bucket = ?) ORDER BY id DESC "
                    u"LIMIT ?) AS l%2 ORDER BY l.id"_s.arg(kLedgerColumns, join), {sku, bucket, bucket, limit})
        : m_db.exec(u"SELECT %1 FROM ledger l%2 WHERE l.sku = ? AND (? < 0 OR l.bucket = ?) ORDER BY l.id"_s.arg(
                        kLedgerColumns, join),
                    {sku, bucket, bucket});
    if (!rows)
        return std::unexpected(rows.error());
    return ledgerRows(*rows);
}

Result<QList<LedgerRow>> Book::recentLedger(int limit)
{
    if (limit < 1 || limit > 10000)
        return fail(ErrorCode::InvalidArgument, u"limit must be from 1 to 10000, got %1"_s.arg(limit), u"limit"_s);
    auto rows = m_db.exec(u"SELECT %1 FROM (SELECT * FROM ledger ORDER BY id DESC LIMIT ?) AS l%2 ORDER BY l.id"_s.arg(
                              kLedgerColumns, kWithAdjustments),
                          {limit});
    if (!rows)
        return std::unexpected(rows.error());
    return ledgerRows(*rows);
}

Result<QList<LedgerRow>> Book::ledgerOfOrder(const QString &order)
{
    const bool adjustment = order.startsWith(u"adj:"_s);
    if (auto r = checkOrderId(adjustment ? order.mid(4) : order); !r)
        return std::unexpected(r.error());
    const QString &join = kWithAdjustments;
    auto rows = m_db.exec(u"SELECT %1 FROM ledger l%2 WHERE l.order_id = ? ORDER BY l.id"_s.arg(kLedgerColumns, join),
                          {order});
    if (!rows)
        return std::unexpected(rows.error());
    return ledgerRows(*rows);
}

Result<std::optional<OrderStatus>> Book::orderStatus(const QString &order)
{
    auto rows = m_db.exec(u"SELECT status FROM orders WHERE order_id = ?"_s, {order});
    if (!rows)
        return std::unexpected(rows.error());
    if (rows->isEmpty())
        return std::optional<OrderStatus>{};
    return orderStatusFrom(rows->first().at(0).toString());
}

Result<OrderView> Book::order(const QString &order)
{
    return this->order(order, m_actor);
}

Result<OrderView> Book::order(const QString &order, const Actor &asker)
{
    if (auto r = checkOrderId(order); !r)
        return std::unexpected(r.error());
    auto rows = m_db.exec(u"SELECT user_id, status, created_at, expires_at, payment_ref, close_reason, created_by "
                          u"FROM orders WHERE order_id = ?"_s,
                          {order});
    if (!rows)
        return std::unexpected(rows.error());
    if (rows->isEmpty() || !asker.reaches(rows->first().at(6).toString()))
        return std::unexpected(unknownOrder(order));
    const QVariantList &row = rows->first();
    auto lines = linesOf(order);
    if (!lines)
        return std::unexpected(lines.error());
    OrderView out;
    out.order = order;
    out.user = row.at(0).toString();
    out.status = orderStatusFrom(row.at(1).toString());
    out.createdAtMs = i64(row.at(2));
    out.expiresAtMs = i64(row.at(3));
    out.paymentRef = row.at(4).toString();
    out.closeReason = row.at(5).toString();
    out.createdBy = row.at(6).toString();
    out.lines = linesBySku(*lines);
    return out;
}

Result<qint64> Book::ledgerCount()
{
    auto rows = m_db.exec(u"SELECT count(*) FROM ledger"_s);
    if (!rows)
        return std::unexpected(rows.error());
    return i64(rows->first().at(0));
}

Result<int> Book::refundCount(const QString &order)
{
    auto rows = m_db.exec(u"SELECT count(*) FROM refunds WHERE order_id = ?"_s, {order});
    if (!rows)
        return std::unexpected(rows.error());
    return rows->first().at(0).toInt();
}

Result<QList<Refund>> Book::refunds(const QString &order)
{
    auto rows = m_db.exec(u"SELECT payment_ref, reason, created_at, operator, source FROM refunds WHERE order_id = ? "
                          u"ORDER BY id"_s,
                          {order});
    if (!rows)
        return std::unexpected(rows.error());
    QList<Refund> out;
    for (const QVariantList &row : rows->rows)
        out << Refund{order, row.at(0).toString(), row.at(1).toString(), i64(row.at(2)), row.at(3).toString(),
                      row.at(4).toString()};
    return out;
}

Result<BookCheck> Book::check()
{
    return checkInvariants(m_db, LedgerWindow::whole());
}

} // namespace flashstock
