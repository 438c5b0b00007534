#include "store/Book.h"

#include "Identifiers.h"
#include "store/BookRows.h"
#include "store/BookSql.h"
#include "store/Database.h"
#include "store/SqlValues.h"

#include <QMap>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr int kMaxBuckets = 1024;

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
    , m_locks(db)
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
    if (auto r = checkName(reason, u"reason"_s, kMaxReasonLength); !r)
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
                              levelsFrom(upd->first(), bucket), m_actor);
        !r)
        return std::unexpected(r.error());
    return true;
}

Result<void> Book::appendLedger(const QString &order, const QString &operation, const QString &sku, int bucket,
                                const QString &token, const Levels3 &delta, const BucketLevels &after, const Actor &by)
{
    const Levels3 to{after.available, after.locked, after.sold};
    const Levels3 from{to.available - delta.available, to.locked - delta.locked, to.sold - delta.sold};
    return appendLedgerRow(order, operation, sku, bucket, token, delta, from, to, by);
}

Result<void> Book::appendLedgerRow(const QString &order, const QString &operation, const QString &sku, int bucket,
                                   const QString &token, const Levels3 &delta, const Levels3 &before,
                                   const Levels3 &after, const Actor &by)
{
    auto r = m_db.exec(sql::insertLedger(m_db.nowMsExpr()),
                       {order, operation, sku, bucket, nullable(token), delta.available, delta.locked, delta.sold,
                        before.available, before.locked, before.sold, after.available, after.locked, after.sold,
                        by.operatorName, by.source});
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

Result<ReserveResult> Book::answerExisting(const QString &order, const QList<OrderLine> &wanted, const Actor &by,
                                           bool &fenced)
{
    ReserveResult out;
    out.order = order;
    auto existing = m_db.exec(u"SELECT status, expires_at, created_by FROM orders WHERE order_id = ?"_s, {order});
    if (!existing)
        return std::unexpected(existing.error());
    if (existing->isEmpty()) // deleted between the two statements: try again
        return fail(ErrorCode::Conflict, u"order vanished during reserve"_s);
    const QString status = existing->first().at(0).toString();
    auto held = linesOf(order);
    if (!held)
        return std::unexpected(held.error());
    if (status == u"ABANDONED"_s) { // fenced since takeOverFenced looked
        fenced = true;
        return out;
    }
    for (const OrderLine &w : wanted)
        if (!w.token.isEmpty()
            && std::any_of(held->cbegin(), held->cend(), [&](const OrderLine &h) { return h.token == w.token; }))
            out.heldTokens << w.token;
    if (!by.reaches(existing->first().at(2).toString())) {
        // Another's order: the id is taken, and nothing of the order shows.
        out.outcome = Outcome::Duplicate;
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
    // Borrow: the preferred bucket is short, try any bucket that has enough. The preferred
    // one stays locked (the lock order, BookLocks: every reserve of an order holds it
    // before the order's row).
    if (auto r = m_locks.lock({{line.sku, preferred}}); !r)
        return std::unexpected(r.error());
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
    if (auto r = m_locks.beforeChange(line.sku, bucket); !r)
        return std::unexpected(r.error());
    auto upd = m_db.exec(sql::reserveBucket(), {line.qty, line.qty, line.sku, bucket, line.qty});
    if (!upd)
        return std::unexpected(upd.error());
    if (upd->isEmpty())
        return std::optional<BucketTake>{};
    m_locks.took(line.sku, bucket);
    return std::optional<BucketTake>{BucketTake{bucket, line.qty, levelsFrom(upd->first(), bucket)}};
}

Result<void> Book::recordTake(const QString &order, const OrderLine &line, const QList<BucketTake> &parts,
                              const Actor &by)
{
    for (const BucketTake &part : parts) {
        auto ol = m_db.exec(sql::insertOrderLine(), {order, line.sku, part.bucket, part.qty, nullable(line.token)});
        if (!ol)
            return std::unexpected(ol.error());
        if (auto r = appendLedger(order, u"RESERVE"_s, line.sku, part.bucket, line.token,
                                  Levels3{-part.qty, part.qty, 0}, part.after, by);
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

Result<void> Book::checkFinish(const QString &order, Finish finish, const QString &detail)
{
    if (auto r = checkOrderId(order); !r)
        return r;
    if (finish == Finish::Pay)
        return checkPaymentRef(detail);
    return checkReleaseReason(detail);
}

Result<OrderChange> Book::confirm(const QString &order, const QString &paymentRef)
{
    return finishOrders({FinishOrder{order, paymentRef, m_actor}}, Finish::Pay, Replay::OnUnknown).constFirst();
}

Result<OrderChange> Book::release(const QString &order, const QString &reason)
{
    return finishOrders({FinishOrder{order, reason, m_actor}}, Finish::Release, Replay::OnUnknown).constFirst();
}

Result<QList<OrderChange>> Book::gateReleasesDue(int limit)
{
    auto due = m_db.exec(u"SELECT o.order_id, ol.sku, ol.qty, ol.token FROM orders o JOIN order_lines ol "
                         u"ON ol.order_id = o.order_id WHERE o.order_id IN (SELECT order_id FROM orders WHERE "
                         u"gate_release_due = 1 ORDER BY order_id LIMIT ?) ORDER BY o.order_id, ol.sku, ol.bucket"_s,
                         {std::clamp(limit, 1, 10000)});
    if (!due)
        return std::unexpected(due.error());
    QList<OrderChange> out;
    for (const QVariantList &r : due->rows) {
        if (out.isEmpty() || out.last().order != r.at(0).toString())
            out << OrderChange{Outcome::AlreadyClosed, r.at(0).toString(), {}};
        out.last().lines << OrderLine{r.at(1).toString(), i64(r.at(2)), r.at(3).toString()};
    }
    return out;
}

Result<void> Book::gateReleased(const QString &order)
{
    auto r = m_db.exec(u"UPDATE orders SET gate_release_due = 0 WHERE order_id = ? AND gate_release_due = 1"_s, {order});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

} // namespace flashstock
