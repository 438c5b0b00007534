#include "store/SaleStore.h"

#include "Identifiers.h"
#include "store/Database.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

const QString kSaleColumns =
    u"id, sku, status, start_at, end_at, hold_seconds, per_user_limit, book_only, units, created_at"_s;

Sale saleFrom(const QVariantList &r)
{
    Sale s;
    s.id = r.at(0).toLongLong();
    s.sku = r.at(1).toString();
    const QString status = r.at(2).toString();
    s.status = status == u"open"_s     ? SaleStatus::Open
             : status == u"paused"_s   ? SaleStatus::Paused
             : status == u"stopped"_s  ? SaleStatus::Stopped
                                       : SaleStatus::Scheduled;
    s.startMs = r.at(3).toLongLong();
    s.endMs = r.at(4).toLongLong();
    s.holdSeconds = r.at(5).toLongLong();
    s.perUserLimit = r.at(6).toLongLong();
    s.bookOnly = r.at(7).toLongLong() != 0;
    s.units = r.at(8).toLongLong();
    s.createdAtMs = r.at(9).toLongLong();
    return s;
}

} // namespace

SaleStore::SaleStore(Database &db)
    : m_db(db)
{
}

Result<Sale> SaleStore::create(const QString &sku, qint64 startMs, qint64 endMs, qint64 holdSeconds,
                               qint64 perUserLimit, const QString &operatorName)
{
    if (auto r = checkSkuId(sku); !r)
        return std::unexpected(r.error());
    if (auto r = checkHoldSeconds(holdSeconds); !r)
        return std::unexpected(r.error());
    if (perUserLimit < 0 || perUserLimit > kMaxQuantity)
        return fail(ErrorCode::InvalidArgument,
                    u"per-user-limit must be from 0 (none) to %1, got %2"_s.arg(kMaxQuantity).arg(perUserLimit),
                    u"per-user-limit"_s);
    if (startMs < 0 || endMs < 0 || (endMs != 0 && endMs <= startMs))
        return fail(ErrorCode::InvalidArgument, u"end must be after start"_s, u"end"_s);
    const QString now = m_db.nowMsExpr();
    bool unknown = false;
    auto created = m_db.write<qint64>([&](Transaction &tx) -> Result<qint64> {
        auto stock = m_db.exec(u"SELECT COALESCE(SUM(available), -1) FROM buckets WHERE sku = ?"_s, {sku});
        if (!stock)
            return std::unexpected(stock.error());
        const qint64 units = stock->first().at(0).toLongLong();
        if (units < 0) {
            unknown = true;
            tx.rollbackOnly();
            return 0;
        }
        // One sale at a time per SKU: a second one would silently close the first.
        auto live = m_db.exec(u"SELECT id, status FROM sales WHERE sku = ? AND status <> 'stopped' ORDER BY id DESC LIMIT 1"_s,
                              {sku});
        if (!live)
            return std::unexpected(live.error());
        if (!live->isEmpty()) {
            tx.rollbackOnly();
            return fail(ErrorCode::InvalidArgument,
                        u"sku %1 already has sale %2 (%3): stop it before creating another"_s.arg(
                            quoteForMessage(sku), live->first().at(0).toString(), live->first().at(1).toString()),
                        u"sku"_s);
        }
        auto ins = m_db.exec(u"INSERT INTO sales (sku, status, start_at, end_at, hold_seconds, per_user_limit, "
                             u"book_only, units, created_at, created_by) VALUES (?, 'scheduled', ?, ?, ?, ?, 0, ?, "
                             u"%1, ?) RETURNING id"_s.arg(now),
                             {sku, startMs, endMs, holdSeconds, perUserLimit, units, operatorName});
        if (!ins)
            return std::unexpected(ins.error());
        return ins->first().at(0).toLongLong();
    });
    if (!created)
        return std::unexpected(created.error());
    if (unknown)
        return fail(ErrorCode::InvalidArgument, u"sku %1 is unknown"_s.arg(quoteForMessage(sku)), u"sku"_s);
    return get(*created);
}

Result<Sale> SaleStore::get(qint64 id)
{
    auto rows = m_db.exec(u"SELECT %1 FROM sales WHERE id = ?"_s.arg(kSaleColumns), {id});
    if (!rows)
        return std::unexpected(rows.error());
    if (rows->isEmpty())
        return fail(ErrorCode::InvalidArgument, u"sale %1 is unknown"_s.arg(id), u"sale"_s);
    return saleFrom(rows->first());
}

Result<Sale> SaleStore::setStatus(qint64 id, SaleStatus status)
{
    auto current = get(id);
    if (!current)
        return current;
    if (current->status == status)
        return current;
    if (current->status == SaleStatus::Stopped)
        return fail(ErrorCode::InvalidArgument,
                    u"sale %1 is stopped and cannot be started again; create a new sale"_s.arg(id), u"sale"_s);
    if (status == SaleStatus::Paused && current->status != SaleStatus::Open)
        return fail(ErrorCode::InvalidArgument,
                    u"sale %1 is %2: only an open sale can be paused"_s.arg(id).arg(saleStatusName(current->status)),
                    u"sale"_s);
    // Only from the status just read: a stop that landed in between is final, never undone.
    auto r = m_db.exec(u"UPDATE sales SET status = ? WHERE id = ? AND status = ?"_s,
                       {saleStatusName(status), id, saleStatusName(current->status)});
    if (!r)
        return std::unexpected(r.error());
    if (r->affected == 0)
        return fail(ErrorCode::Conflict,
                    u"sale %1 changed while it was being set to %2; look at it again"_s.arg(id).arg(
                        saleStatusName(status)),
                    u"sale"_s);
    return get(id);
}

Result<Sale> SaleStore::setBookOnly(qint64 id, bool on)
{
    auto current = get(id);
    if (!current)
        return current;
    auto r = m_db.exec(u"UPDATE sales SET book_only = ? WHERE id = ?"_s, {on ? 1 : 0, id});
    if (!r)
        return std::unexpected(r.error());
    return get(id);
}

Result<QList<Sale>> SaleStore::list()
{
    auto rows = m_db.exec(u"SELECT %1 FROM sales ORDER BY id DESC"_s.arg(kSaleColumns));
    if (!rows)
        return std::unexpected(rows.error());
    QList<Sale> out;
    for (const QVariantList &r : rows->rows)
        out << saleFrom(r);
    return out;
}

Result<std::optional<Sale>> SaleStore::latestFor(const QString &sku)
{
    auto rows = m_db.exec(u"SELECT %1 FROM sales WHERE sku = ? ORDER BY id DESC LIMIT 1"_s.arg(kSaleColumns), {sku});
    if (!rows)
        return std::unexpected(rows.error());
    if (rows->isEmpty())
        return std::optional<Sale>{};
    return std::optional<Sale>(saleFrom(rows->first()));
}

Result<qint64> SaleStore::userUnits(const QString &sku, const QString &user)
{
    auto rows = m_db.exec(u"SELECT COALESCE(SUM(ol.qty), 0) FROM order_lines ol JOIN orders o ON o.order_id = ol.order_id "
                          u"WHERE ol.sku = ? AND o.user_id = ? AND o.status IN ('PENDING', 'PAID')"_s,
                          {sku, user});
    if (!rows)
        return std::unexpected(rows.error());
    return rows->first().at(0).toLongLong();
}

Result<QHash<QString, SaleStore::OrderUnits>> SaleStore::unitsByOrder(const QString &sku)
{
    auto rows = m_db.exec(u"SELECT o.order_id, o.user_id, SUM(ol.qty) FROM order_lines ol "
                          u"JOIN orders o ON o.order_id = ol.order_id "
                          u"WHERE ol.sku = ? AND o.status IN ('PENDING', 'PAID') AND o.user_id <> '' "
                          u"GROUP BY o.order_id, o.user_id"_s,
                          {sku});
    if (!rows)
        return std::unexpected(rows.error());
    QHash<QString, OrderUnits> out;
    out.reserve(rows->rows.size());
    for (const QVariantList &row : rows->rows)
        out.insert(row.at(0).toString(), OrderUnits{row.at(1).toString(), row.at(2).toLongLong()});
    return out;
}

} // namespace flashstock
