#include "store/Book.h"

#include "Identifiers.h"
#include "store/BookRows.h"
#include "store/BookSql.h"
#include "store/Database.h"

#include <QMap>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr int kMaxBuckets = 1024;

qint64 i64(const QVariant &v) { return v.toLongLong(); }

QVariant nullable(const QString &s) { return s.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(s); }

} // namespace

Result<QList<OrderLine>> Book::normalizeLines(QList<OrderLine> lines)
{
    if (lines.isEmpty())
        return fail(ErrorCode::InvalidArgument, u"line: an order needs at least one line"_s, u"line"_s);
    if (lines.size() > kMaxOrderLines)
        return fail(ErrorCode::InvalidArgument,
                    u"line: an order has at most %1 lines, got %2"_s.arg(kMaxOrderLines).arg(lines.size()), u"line"_s);
    QMap<QString, OrderLine> bySku;
    for (const OrderLine &line : lines) {
        if (auto r = checkSkuId(line.sku); !r)
            return std::unexpected(r.error());
        if (auto r = checkQuantity(line.qty); !r)
            return std::unexpected(r.error());
        auto it = bySku.find(line.sku);
        if (it == bySku.end()) {
            bySku.insert(line.sku, line);
            continue;
        }
        it->qty += line.qty;
        if (auto r = checkQuantity(it->qty); !r)
            return std::unexpected(r.error());
        if (!line.token.isEmpty() && !it->token.isEmpty() && line.token != it->token)
            return fail(ErrorCode::InvalidArgument,
                        u"line: SKU %1 appears twice with two gate tokens"_s.arg(line.sku), u"line"_s);
        if (it->token.isEmpty())
            it->token = line.token;
    }
    return bySku.values();
}

Book::Book(Database &db, Actor actor)
    : m_db(db)
    , m_actor(std::move(actor))
{
}

int Book::preferredBucket(const QString &order, int bucketCount)
{
    if (bucketCount <= 1)
        return 0;
    quint32 h = 2166136261u;
    for (QChar c : order) {
        h ^= c.unicode();
        h *= 16777619u;
    }
    return int(h % quint32(bucketCount));
}

Result<int> Book::bucketCount(const QString &sku)
{
    if (auto r = checkSkuId(sku); !r)
        return std::unexpected(r.error());
    if (auto it = m_bucketCounts.constFind(sku); it != m_bucketCounts.cend())
        return *it;
    auto rows = m_db.exec(u"SELECT bucket_count FROM skus WHERE sku = ?"_s, {sku});
    if (!rows)
        return std::unexpected(rows.error());
    if (rows->isEmpty())
        return fail(ErrorCode::InvalidArgument, u"sku %1 is unknown"_s.arg(quoteForMessage(sku)), u"sku"_s);
    const int n = rows->first().at(0).toInt();
    m_bucketCounts.insert(sku, n);
    return n;
}

// --- adjustments -------------------------------------------------------------------------

namespace {

/// Spreads `units` over `buckets`: equal shares, the remainder to the lowest buckets.
QList<qint64> spread(qint64 units, int buckets)
{
    QList<qint64> shares(buckets, units / buckets);
    for (qint64 i = 0; i < units % buckets; ++i)
        ++shares[int(i)];
    return shares;
}

} // namespace

Result<Adjustment> Book::addSku(const QString &sku, qint64 stock, int buckets)
{
    if (auto r = checkSkuId(sku); !r)
        return std::unexpected(r.error());
    if (stock < 0 || stock > kMaxQuantity)
        return fail(ErrorCode::InvalidArgument,
                    u"stock must be a whole number of units from 0 to %1, got %2"_s.arg(kMaxQuantity).arg(stock),
                    u"stock"_s);
    if (buckets < 1 || buckets > kMaxBuckets)
        return fail(ErrorCode::InvalidArgument,
                    u"buckets must be from 1 to %1, got %2"_s.arg(kMaxBuckets).arg(buckets), u"buckets"_s);
    const QString now = m_db.nowMsExpr();
    bool existed = false;
    auto result = m_db.write<Adjustment>([&](Transaction &tx) -> Result<Adjustment> {
        auto ins = m_db.exec(u"INSERT INTO skus (sku, bucket_count, created_at, created_by) VALUES (?, ?, %1, ?) "
                             u"ON CONFLICT (sku) DO NOTHING RETURNING sku"_s.arg(now),
                             {sku, buckets, m_actor.operatorName});
        if (!ins)
            return std::unexpected(ins.error());
        if (ins->isEmpty()) {
            existed = true;
            tx.rollbackOnly();
            return Adjustment{};
        }
        for (int b = 0; b < buckets; ++b) {
            auto r = m_db.exec(u"INSERT INTO buckets (sku, bucket, available, locked, sold, total) "
                               u"VALUES (?, ?, 0, 0, 0, 0)"_s, {sku, b});
            if (!r)
                return std::unexpected(r.error());
        }
        return Adjustment{0, sku, 0};
    });
    if (!result)
        return result;
    if (existed)
        return fail(ErrorCode::InvalidArgument, u"sku %1 already exists"_s.arg(quoteForMessage(sku)), u"sku"_s);
    m_bucketCounts.insert(sku, buckets);
    if (stock == 0)
        return result;
    return adjust(sku, stock, u"initial"_s, u"initial stock"_s);
}

Result<Adjustment> Book::restock(const QString &sku, qint64 qty, const QString &reason)
{
    if (auto r = checkQuantity(qty); !r)
        return std::unexpected(r.error());
    return adjust(sku, qty, u"restock"_s, reason.isEmpty() ? u"restock"_s : reason);
}

Result<Adjustment> Book::adjust(const QString &sku, qint64 units, const QString &kind, const QString &reason)
{
    auto n = bucketCount(sku);
    if (!n)
        return std::unexpected(n.error());
    if (auto r = checkName(reason, u"reason"_s, 500); !r)
        return std::unexpected(r.error());
    if (units == 0 || units > kMaxQuantity || units < -kMaxQuantity)
        return fail(ErrorCode::InvalidArgument,
                    u"units must be non-zero and at most %1 either way, got %2"_s.arg(kMaxQuantity).arg(units),
                    u"qty"_s);
    const QList<qint64> shares = spread(std::abs(units), *n);
    return m_db.write<Adjustment>([&](Transaction &) -> Result<Adjustment> {
        auto id = recordAdjustment(sku, kind, units, reason);
        if (!id)
            return std::unexpected(id.error());
        for (int b = 0; b < *n; ++b) {
            const qint64 delta = units > 0 ? shares[b] : -shares[b];
            if (delta == 0)
                continue;
            auto moved = adjustBucket(*id, sku, b, delta);
            if (!moved)
                return std::unexpected(moved.error());
            if (!*moved)
                return fail(ErrorCode::InvalidArgument,
                            u"qty: bucket %1 of %2 has fewer than %3 available units to take away"_s
                                .arg(b).arg(sku).arg(-delta),
                            u"qty"_s);
        }
        return Adjustment{*id, sku, units};
    });
}

Result<qint64> Book::recordAdjustment(const QString &sku, const QString &kind, qint64 units, const QString &reason)
{
    auto ins = m_db.exec(u"INSERT INTO adjustments (sku, kind, units, reason, operator, at) "
                         u"VALUES (?, ?, ?, ?, ?, %1) RETURNING id"_s.arg(m_db.nowMsExpr()),
                         {sku, kind, units, reason, m_actor.operatorName});
    if (!ins)
        return std::unexpected(ins.error());
    return i64(ins->first().at(0));
}

Result<bool> Book::adjustBucket(qint64 adjustment, const QString &sku, int bucket, qint64 delta)
{
    auto upd = m_db.exec(u"UPDATE buckets SET available = available + ?, total = total + ? "
                         u"WHERE sku = ? AND bucket = ? AND available + ? >= 0 "
                         u"RETURNING available, locked, sold, total"_s,
                         {delta, delta, sku, bucket, delta});
    if (!upd)
        return std::unexpected(upd.error());
    if (upd->isEmpty())
        return false;
    if (auto r = appendLedger(u"adj:%1"_s.arg(adjustment), u"ADJUST"_s, sku, bucket, {}, Levels3{delta, 0, 0},
                              levelsFrom(upd->first(), bucket));
        !r)
        return std::unexpected(r.error());
    return true;
}

Result<void> Book::appendLedger(const QString &order, const QString &operation, const QString &sku, int bucket,
                                const QString &token, const Levels3 &delta, const BucketLevels &after)
{
    const Levels3 to{after.available, after.locked, after.sold};
    const Levels3 from{to.available - delta.available, to.locked - delta.locked, to.sold - delta.sold};
    return appendLedgerRow(order, operation, sku, bucket, token, delta, from, to);
}

Result<void> Book::appendLedgerRow(const QString &order, const QString &operation, const QString &sku, int bucket,
                                   const QString &token, const Levels3 &delta, const Levels3 &before,
                                   const Levels3 &after)
{
    auto r = m_db.exec(sql::insertLedger(m_db.nowMsExpr()),
                       {order, operation, sku, bucket, nullable(token), delta.available, delta.locked, delta.sold,
                        before.available, before.locked, before.sold, after.available, after.locked, after.sold,
                        m_actor.operatorName, m_actor.source});
    if (!r) {
        if (m_db.lastWasUniqueViolation())
            return fail(ErrorCode::Internal,
                        u"ledger already holds %1 of order %2 on %3 bucket %4: the book and its orders disagree"_s
                            .arg(operation, order, sku).arg(bucket));
        return std::unexpected(r.error());
    }
    return {};
}

// --- reserve -----------------------------------------------------------------------------

Result<QList<OrderLine>> Book::checkReserve(const QString &order, const QString &user, QList<OrderLine> lines,
                                            qint64 holdSeconds)
{
    if (auto r = checkOrderId(order); !r)
        return std::unexpected(r.error());
    if (!user.isEmpty()) {
        if (auto r = checkName(user, u"user"_s); !r)
            return std::unexpected(r.error());
    }
    if (auto r = checkHoldSeconds(holdSeconds); !r)
        return std::unexpected(r.error());
    auto normalized = normalizeLines(std::move(lines));
    if (!normalized)
        return std::unexpected(normalized.error());
    for (const OrderLine &line : *normalized) {
        if (auto n = bucketCount(line.sku); !n)
            return std::unexpected(n.error());
    }
    return normalized;
}

Result<ReserveResult> Book::reserve(const QString &order, const QString &user, QList<OrderLine> lines,
                                    qint64 holdSeconds)
{
    auto checked = checkReserve(order, user, std::move(lines), holdSeconds);
    if (!checked)
        return std::unexpected(checked.error());
    const QList<OrderLine> &wanted = *checked;
    if (m_taker) {
        for (const OrderLine &line : wanted)
            if (auto r = m_taker->beforeTransaction(m_db, order, line, m_bucketCounts.value(line.sku, 1)); !r)
                return std::unexpected(r.error());
    }
    const QString now = m_db.nowMsExpr();
    bool fenced = false;
    auto result = m_db.write<ReserveResult>([&](Transaction &tx) -> Result<ReserveResult> {
        fenced = false;
        // The order row first: it is the idempotency key and the first lock taken.
        auto ins = m_db.exec(sql::insertOrder(now), {order, nullable(user), holdSeconds * 1000});
        if (!ins)
            return std::unexpected(ins.error());
        if (ins->isEmpty()) {
            tx.rollbackOnly();
            return answerExisting(order, wanted, fenced);
        }
        ReserveResult out{Outcome::Reserved, order, wanted, {}, i64(ins->first().at(0))};
        for (const OrderLine &line : wanted) {
            const int buckets = m_bucketCounts.value(line.sku, 1);
            auto parts = m_taker ? m_taker->take(m_db, order, line, buckets) : takeLine(order, line, buckets);
            if (!parts)
                return std::unexpected(parts.error());
            if (parts->isEmpty()) {
                tx.rollbackOnly();
                out.outcome = Outcome::OutOfStock;
                out.shortSku = line.sku;
                return out;
            }
            if (auto r = recordTake(order, line, *parts); !r)
                return std::unexpected(r.error());
        }
        return out;
    });
    if (result && fenced)
        return fail(ErrorCode::Conflict,
                    u"order %1 was abandoned by the reconciler (its gate units were given back); "
                    u"use a new order id"_s.arg(order),
                    u"order"_s);
    return result;
}

Result<ReserveResult> Book::answerExisting(const QString &order, const QList<OrderLine> &wanted, bool &fenced)
{
    ReserveResult out;
    out.order = order;
    auto existing = m_db.exec(u"SELECT status, expires_at FROM orders WHERE order_id = ?"_s, {order});
    if (!existing)
        return std::unexpected(existing.error());
    if (existing->isEmpty()) // deleted between the two statements: try again
        return fail(ErrorCode::Conflict, u"order vanished during reserve"_s);
    const QString status = existing->first().at(0).toString();
    auto held = linesOf(order);
    if (!held)
        return std::unexpected(held.error());
    if (status == u"ABANDONED"_s) {
        fenced = true;
        return out;
    }
    QMap<QString, qint64> heldQty, wantedQty;
    for (const OrderLine &l : *held)
        heldQty[l.sku] += l.qty;
    for (const OrderLine &l : wanted)
        wantedQty[l.sku] += l.qty;
    const bool same = heldQty == wantedQty && (status == u"PENDING"_s || status == u"PAID"_s);
    out.outcome = same ? Outcome::Reserved : Outcome::Duplicate;
    out.expiresAtMs = i64(existing->first().at(1));
    out.lines = linesBySku(*held);
    return out;
}

Result<QList<BucketTake>> Book::takeLine(const QString &order, const OrderLine &line, int buckets)
{
    const int preferred = preferredBucket(order, buckets);
    auto first = takeFromBucket(line, preferred);
    if (!first)
        return std::unexpected(first.error());
    if (*first)
        return QList<BucketTake>{**first};
    if (buckets <= 1)
        return QList<BucketTake>{};
    // Borrow: the preferred bucket is short, try any bucket that has enough.
    auto more = m_db.exec(u"SELECT bucket FROM buckets WHERE sku = ? AND bucket <> ? AND bucket < ? AND available >= ? "
                          u"ORDER BY bucket"_s,
                          {line.sku, preferred, buckets, line.qty});
    if (!more)
        return std::unexpected(more.error());
    for (const QVariantList &row : more->rows) {
        auto other = takeFromBucket(line, row.at(0).toInt());
        if (!other)
            return std::unexpected(other.error());
        if (*other)
            return QList<BucketTake>{**other};
    }
    // No single bucket holds the line, the buckets together may: split it.
    return takeSplit(line, buckets);
}

Result<std::optional<BucketTake>> Book::takeFromBucket(const OrderLine &line, int bucket)
{
    auto upd = m_db.exec(sql::reserveBucket(), {line.qty, line.qty, line.sku, bucket, line.qty});
    if (!upd)
        return std::unexpected(upd.error());
    if (upd->isEmpty())
        return std::optional<BucketTake>{};
    return std::optional<BucketTake>{BucketTake{bucket, line.qty, levelsFrom(upd->first(), bucket)}};
}

Result<void> Book::recordTake(const QString &order, const OrderLine &line, const QList<BucketTake> &parts)
{
    for (const BucketTake &part : parts) {
        auto ol = m_db.exec(sql::insertOrderLine(), {order, line.sku, part.bucket, part.qty, nullable(line.token)});
        if (!ol)
            return std::unexpected(ol.error());
        if (auto r = appendLedger(order, u"RESERVE"_s, line.sku, part.bucket, line.token,
                                  Levels3{-part.qty, part.qty, 0}, part.after);
            !r)
            return r;
    }
    return {};
}

// --- confirm and release -----------------------------------------------------------------

Result<QList<OrderLine>> Book::linesOf(const QString &order)
{
    auto rows = m_db.exec(u"SELECT sku, bucket, qty, token FROM order_lines WHERE order_id = ? ORDER BY sku, bucket"_s,
                          {order});
    if (!rows)
        return std::unexpected(rows.error());
    QList<OrderLine> lines;
    for (const QVariantList &row : rows->rows)
        lines << OrderLine{row.at(0).toString(), i64(row.at(2)), row.at(3).toString()};
    return lines;
}

Result<OrderChange> Book::confirm(const QString &order, const QString &paymentRef)
{
    if (auto r = checkOrderId(order); !r)
        return std::unexpected(r.error());
    if (auto r = checkPaymentRef(paymentRef); !r)
        return std::unexpected(r.error());
    return finishOrder(order, Finish::Pay, paymentRef);
}

Result<OrderChange> Book::release(const QString &order, const QString &reason)
{
    if (auto r = checkOrderId(order); !r)
        return std::unexpected(r.error());
    if (auto r = checkReleaseReason(reason); !r)
        return std::unexpected(r.error());
    return finishOrder(order, Finish::Release, reason);
}

Result<OrderChange> Book::finishOrder(const QString &order, Finish finish, const QString &detail)
{
    const bool pay = finish == Finish::Pay;
    const QString now = m_db.nowMsExpr();
    bool unknown = false;
    auto result = m_db.write<OrderChange>([&](Transaction &tx) -> Result<OrderChange> {
        unknown = false;
        OrderChange out;
        out.order = order;
        auto row = m_db.exec(u"SELECT status, version, payment_ref FROM orders WHERE order_id = ?"_s, {order});
        if (!row)
            return std::unexpected(row.error());
        if (row->isEmpty()) {
            unknown = true;
            tx.rollbackOnly();
            return out;
        }
        const QString status = row->first().at(0).toString();
        const qint64 version = i64(row->first().at(1));
        const QString paidWith = row->first().at(2).toString();
        auto rows = m_db.exec(u"SELECT sku, bucket, qty, token FROM order_lines WHERE order_id = ? "
                              u"ORDER BY sku, bucket"_s, {order});
        if (!rows)
            return std::unexpected(rows.error());
        for (const QVariantList &r : rows->rows)
            out.lines << OrderLine{r.at(0).toString(), i64(r.at(2)), r.at(3).toString()};

        if (status != u"PENDING"_s) {
            if (!pay) {
                tx.rollbackOnly();
                out.outcome = status == u"PAID"_s ? Outcome::AlreadyPaid : Outcome::AlreadyClosed;
                return out;
            }
            if (status == u"PAID"_s && paidWith == detail) {
                tx.rollbackOnly();
                out.outcome = Outcome::Duplicate;
                return out;
            }
            // The order cannot take this payment: record one refund per (order, payment).
            const QString why = status == u"PAID"_s ? u"order already paid"_s : u"order closed"_s;
            if (auto refund = recordRefund(order, detail, why); !refund)
                return std::unexpected(refund.error());
            out.outcome = Outcome::RefundRequired;
            return out;
        }

        // Compare-and-set on (status, version): a racing confirm or release that changed the
        // order first makes this UPDATE match no row, and the transaction starts again.
        auto cas = pay
            ? m_db.exec(u"UPDATE orders SET status = 'PAID', version = version + 1, payment_ref = ?, paid_at = %1 "
                        u"WHERE order_id = ? AND status = 'PENDING' AND version = ? RETURNING version"_s.arg(now),
                        {detail, order, version})
            : m_db.exec(u"UPDATE orders SET status = 'CLOSED', version = version + 1, close_reason = ?, closed_at = %1 "
                        u"WHERE order_id = ? AND status = 'PENDING' AND version = ? RETURNING version"_s.arg(now),
                        {detail, order, version});
        if (!cas)
            return std::unexpected(cas.error());
        if (cas->isEmpty())
            return fail(ErrorCode::Conflict, u"order %1 changed while it was being %2"_s
                                                 .arg(order, pay ? u"confirmed"_s : u"released"_s));
        const QString moveSql = pay ? sql::confirmBucket() : sql::releaseBucket();
        for (const QVariantList &r : rows->rows) {
            const QString sku = r.at(0).toString();
            const int bucket = r.at(1).toInt();
            const qint64 qty = i64(r.at(2));
            const QString token = r.at(3).toString();
            auto upd = m_db.exec(moveSql, {qty, qty, sku, bucket, qty});
            if (!upd)
                return std::unexpected(upd.error());
            if (upd->isEmpty())
                return fail(ErrorCode::Internal,
                            u"book inconsistent: %1 bucket %2 holds fewer than %3 locked units for order %4"_s
                                .arg(sku).arg(bucket).arg(qty).arg(order));
            const BucketLevels after = levelsFrom(upd->first(), bucket);
            auto ledger = pay ? appendLedger(order, u"CONFIRM"_s, sku, bucket, token, Levels3{0, -qty, qty}, after)
                              : appendLedger(order, u"RELEASE"_s, sku, bucket, token, Levels3{qty, -qty, 0}, after);
            if (!ledger)
                return std::unexpected(ledger.error());
        }
        out.outcome = pay ? Outcome::Paid : Outcome::Released;
        return out;
    });
    if (result && unknown)
        return fail(ErrorCode::NotFound, u"order %1 is unknown"_s.arg(quoteForMessage(order)), u"order"_s);
    return result;
}

Result<QList<OrderChange>> Book::expire(std::optional<qint64> nowMs, int batch)
{
    QList<OrderChange> released;
    batch = std::clamp(batch, 1, 10000);
    const QString dueSql = u"SELECT order_id FROM orders WHERE %1 ORDER BY expires_at, order_id LIMIT ?"_s.arg(
        sql::holdIsDue(nowMs ? u"?"_s : m_db.nowMsExpr()));
    QSet<QString> failed;
    for (;;) {
        auto due = nowMs ? m_db.exec(dueSql, {*nowMs, batch + int(failed.size())})
                         : m_db.exec(dueSql, {batch + int(failed.size())});
        if (!due)
            return std::unexpected(due.error());
        int progressed = 0;
        for (const QVariantList &row : due->rows) {
            const QString order = row.at(0).toString();
            if (failed.contains(order))
                continue;
            auto r = finishOrder(order, Finish::Release, u"timeout"_s);
            if (!r) {
                if (r.error().code == ErrorCode::Unavailable)
                    return std::unexpected(r.error());
                failed.insert(order); // left for the reconciler; keep expiring the others
                continue;
            }
            ++progressed;
            if (r->outcome == Outcome::Released)
                released << *r;
        }
        if (progressed == 0 || due->rows.size() < batch + failed.size())
            break;
    }
    return released;
}

} // namespace flashstock
