#include "store/ExpiryStore.h"

#include "store/BookSql.h"
#include "store/Database.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr qint64 kForgetBeatsAfterMs = 24LL * 3600 * 1000;

} // namespace

ExpiryStore::ExpiryStore(Database &db)
    : m_db(db)
{
}

Result<void> ExpiryStore::beat(const QString &expirer, const QString &kind, const QString &operatorName,
                               qint64 everyMs, qint64 released, const QString &address)
{
    if (everyMs <= 0)
        return fail(ErrorCode::InvalidArgument, u"every: an expirer's interval must be above 0 ms, got %1"_s.arg(everyMs),
                    u"every"_s);
    const QString now = m_db.nowMsExpr();
    return m_db.write<void>([&](Transaction &) -> Result<void> {
        auto up = m_db.exec(u"INSERT INTO expirer_heartbeats (expirer, kind, operator, every_ms, beat_at, released, "
                            u"address) VALUES (?, ?, ?, ?, %1, ?, ?) ON CONFLICT (expirer) DO UPDATE SET "
                            u"kind = excluded.kind, operator = excluded.operator, every_ms = excluded.every_ms, "
                            u"beat_at = excluded.beat_at, released = excluded.released, address = excluded.address"_s
                                .arg(now),
                            {expirer, kind, operatorName, everyMs, released,
                             address.isEmpty() ? u""_s : address}); // a null QString binds as NULL
        if (!up)
            return std::unexpected(up.error());
        auto forget = m_db.exec(u"DELETE FROM expirer_heartbeats WHERE beat_at < %1 - ?"_s.arg(now), {kForgetBeatsAfterMs});
        if (!forget)
            return std::unexpected(forget.error());
        return {};
    });
}

Result<ExpiryStatus> ExpiryStore::status()
{
    ExpiryStatus out;
    auto now = m_db.nowMs();
    if (!now)
        return std::unexpected(now.error());
    out.nowMs = *now;
    // The same due rule as Book::expire, at one instant read above.
    const QString due = sql::holdIsDue(u"?"_s);
    auto bySku = m_db.exec(u"SELECT l.sku, count(DISTINCT o.order_id), sum(l.qty), min(o.expires_at) FROM orders o "
                           u"JOIN order_lines l ON l.order_id = o.order_id WHERE %1 GROUP BY l.sku ORDER BY l.sku"_s
                               .arg(due),
                           {out.nowMs});
    if (!bySku)
        return std::unexpected(bySku.error());
    for (const QVariantList &r : bySku->rows)
        out.overdue << OverdueHolds{r.at(0).toString(), r.at(1).toLongLong(), r.at(2).toLongLong(), r.at(3).toLongLong()};
    auto orders = m_db.exec(u"SELECT count(*) FROM orders o WHERE %1"_s.arg(due), {out.nowMs});
    if (!orders)
        return std::unexpected(orders.error());
    out.overdueOrders = orders->first().at(0).toLongLong();
    auto beats = m_db.exec(u"SELECT expirer, kind, operator, every_ms, beat_at, released, address "
                           u"FROM expirer_heartbeats WHERE beat_at >= ? ORDER BY beat_at DESC, expirer"_s,
                           {out.nowMs - kForgetBeatsAfterMs});
    if (!beats)
        return std::unexpected(beats.error());
    for (const QVariantList &r : beats->rows)
        out.expirers << ExpirerBeat{r.at(0).toString(), r.at(1).toString(), r.at(2).toString(), r.at(3).toLongLong(),
                                    r.at(4).toLongLong(), r.at(5).toLongLong(), r.at(6).toString()};
    return out;
}

} // namespace flashstock
