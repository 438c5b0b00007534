// Book: its side of reconciliation. The reconciler's fence and reads of orders, and the
// statements an approved correction runs inside the approval's transaction.

#include "store/Book.h"

#include "store/BookRows.h"
#include "store/Database.h"
#include "store/SqlValues.h"

using namespace Qt::StringLiterals;

namespace flashstock {

Result<OrderStatus> Book::fenceOrder(const QString &order, const QString &user, const QString &token)
{
    const QString now = m_db.nowMsExpr();
    auto fenced = m_db.write<void>([&](Transaction &) -> Result<void> {
        auto ins = m_db.exec(u"INSERT INTO orders (order_id, user_id, status, version, created_at, close_reason) "
                             u"VALUES (?, ?, 'ABANDONED', 1, %1, 'reconcile') ON CONFLICT (order_id) DO NOTHING"_s.arg(now),
                             {order, nullable(user)});
        if (!ins)
            return std::unexpected(ins.error());
        // The order's row lock, as a retry taking the order over takes it first: either the
        // retry committed (no longer ABANDONED: no fence) or it will see this fence.
        auto lock = m_db.exec(u"UPDATE orders SET version = version WHERE order_id = ? AND status = 'ABANDONED'"_s,
                              {order});
        if (!lock)
            return std::unexpected(lock.error());
        if (lock->affected != 1)
            return {};
        auto fence = m_db.exec(u"INSERT INTO order_fences (order_id, token, fenced_at) VALUES (?, ?, %1) "
                               u"ON CONFLICT (order_id, token) DO NOTHING"_s.arg(now),
                               {order, token});
        if (!fence)
            return std::unexpected(fence.error());
        return {};
    });
    if (!fenced)
        return std::unexpected(fenced.error());
    auto status = orderStatus(order);
    if (!status)
        return std::unexpected(status.error());
    if (!*status)
        return fail(ErrorCode::Internal, u"order %1 is neither fenced nor present after the fence"_s.arg(order));
    return **status;
}

Result<std::optional<Book::OrderOnSku>> Book::orderOnSku(const QString &order, const QString &sku)
{
    auto r = m_db.exec(u"SELECT o.status, ol.token FROM orders o LEFT JOIN order_lines ol "
                       u"ON ol.order_id = o.order_id AND ol.sku = ? WHERE o.order_id = ?"_s,
                       {sku, order});
    if (!r)
        return std::unexpected(r.error());
    if (r->isEmpty())
        return std::optional<OrderOnSku>{};
    const QString status = r->first().at(0).toString();
    const auto known = orderStatusFromName(status);
    if (!known)
        return fail(ErrorCode::Internal, u"order %1 has status %2, which the book never writes"_s.arg(order, status));
    return std::optional<OrderOnSku>{OrderOnSku{*known, r->first().at(1).toString()}};
}

Result<qint64> Book::lastLedgerId(const QString &sku)
{
    auto r = m_db.exec(u"SELECT COALESCE(MAX(id), 0) FROM ledger WHERE sku = ?"_s, {sku});
    if (!r)
        return std::unexpected(r.error());
    return r->first().at(0).toLongLong();
}

// --- inside a caller's transaction ----------------------------------------------------------

Result<std::optional<BucketLevels>> Book::lockBucket(const QString &sku, int bucket)
{
    // PostgreSQL: the row stays as read until the caller commits. SQLite: BEGIN IMMEDIATE
    // already made the caller's transaction the only writer.
    return m_locks.lockAndRead(sku, bucket);
}

Result<qint64> Book::setBucket(const QString &sku, int bucket, const Levels3 &found, const Levels3 &ledger,
                               const Levels3 &target, const QString &kind, const QString &reason)
{
    const bool moves = target != found;
    if (moves) {
        auto upd = m_db.exec(u"UPDATE buckets SET available = ?, locked = ?, sold = ?, total = ? "
                             u"WHERE sku = ? AND bucket = ? AND available = ? AND locked = ? AND sold = ?"_s,
                             {target.available, target.locked, target.sold, target.total(), sku, bucket,
                              found.available, found.locked, found.sold});
        if (!upd)
            return std::unexpected(upd.error());
        if (upd->affected != 1)
            return fail(ErrorCode::Conflict, u"bucket %1 of %2 moved during the correction"_s.arg(bucket).arg(sku));
    }
    // The bucket's levels before: where it moved from, or (a stocktake, which leaves the
    // bucket as counted) what the ledger explained.
    const Levels3 &before = moves ? found : ledger;
    auto id = recordAdjustment(sku, kind, target.available - before.available, reason);
    if (!id)
        return std::unexpected(id.error());
    const Levels3 delta{target.available - ledger.available, target.locked - ledger.locked, target.sold - ledger.sold};
    if (auto r = appendLedgerRow(u"adj:%1"_s.arg(*id), u"ADJUST"_s, sku, bucket, {}, delta, before, target); !r)
        return std::unexpected(r.error());
    return *id;
}

Result<std::optional<qint64>> Book::changeOrderStatus(const QString &order, const QString &sku, OrderStatus from,
                                                      OrderStatus to, const QString &reason)
{
    // The order's buckets before its row (the lock order, BookLocks), as a confirm or a
    // release of the order takes them.
    auto buckets = m_db.exec(u"SELECT sku, bucket FROM order_lines WHERE order_id = ?"_s, {order});
    if (!buckets)
        return std::unexpected(buckets.error());
    QList<BookLocks::Bucket> held;
    for (const QVariantList &row : buckets->rows)
        held << BookLocks::Bucket{row.at(0).toString(), row.at(1).toInt()};
    if (auto r = m_locks.lock(held); !r)
        return std::unexpected(r.error());
    auto upd = m_db.exec(u"UPDATE orders SET status = ?, version = version + 1 WHERE order_id = ? AND status = ?"_s,
                         {orderStatusName(to), order, orderStatusName(from)});
    if (!upd)
        return std::unexpected(upd.error());
    if (upd->affected != 1)
        return std::optional<qint64>{};
    auto id = recordAdjustment(sku, u"correction"_s, 0, reason);
    if (!id)
        return std::unexpected(id.error());
    return std::optional<qint64>{*id};
}

Result<void> Book::linkAdjustment(qint64 adjustment, qint64 discrepancy)
{
    auto r = m_db.exec(u"UPDATE adjustments SET discrepancy_id = ? WHERE id = ?"_s, {discrepancy, adjustment});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<void> Book::recordRefund(const QString &order, const QString &payment, const QString &reason)
{
    return recordRefund(order, payment, reason, m_actor);
}

Result<void> Book::recordRefund(const QString &order, const QString &payment, const QString &reason, const Actor &by)
{
    auto r = m_db.exec(u"INSERT INTO refunds (order_id, payment_ref, reason, created_at, operator, source) "
                       u"VALUES (?, ?, ?, %1, ?, ?) ON CONFLICT (order_id, payment_ref) DO NOTHING"_s.arg(
                           m_db.nowMsExpr()),
                       {order, payment, reason, by.operatorName, by.source});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

} // namespace flashstock
