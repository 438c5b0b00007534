#include "store/LedgerWindow.h"

#include "store/Database.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The ledger watermark as a scalar subquery (0 before the first pass).
const QString kWatermark = u"(SELECT COALESCE(MAX(value), 0) FROM reconcile_state WHERE name = 'ledger_watermark')"_s;

} // namespace

QString LedgerWindow::sql(Dialect dialect) const
{
    const QString table = dialect == Dialect::Sqlite ? u"ledger NOT INDEXED"_s : u"ledger"_s;
    return u"%1 WHERE id > %2"_s.arg(table).arg(after);
}

LedgerWatermark::LedgerWatermark(Database &db)
    : m_db(db)
{
}

Result<LedgerWindow> LedgerWatermark::window()
{
    auto r = m_db.exec(u"SELECT %1"_s.arg(kWatermark));
    if (!r)
        return std::unexpected(r.error());
    return LedgerWindow{r->first().at(0).toLongLong()};
}

Result<qint64> LedgerWatermark::advance(qint64 lagMs, qint64 upTo)
{
    return m_db.write<qint64>([&](Transaction &) -> Result<qint64> {
        // The watermark's row first: reconcilers (one per server) advance it one after the
        // other, each from where the last one left it, so no ledger row is folded twice.
        if (auto r = m_db.exec(u"INSERT INTO reconcile_state (name, value) VALUES ('ledger_watermark', 0) "
                               u"ON CONFLICT (name) DO UPDATE SET value = reconcile_state.value"_s);
            !r)
            return std::unexpected(r.error());
        auto current = window();
        if (!current)
            return std::unexpected(current.error());
        const qint64 wm = current->after;
        auto top = m_db.exec(
            u"SELECT MAX(id) FROM ledger WHERE id > ? AND id <= ? AND at < %1 - ?"_s.arg(m_db.nowMsExpr()),
            {wm, upTo, lagMs});
        if (!top)
            return std::unexpected(top.error());
        if (top->isEmpty() || top->first().at(0).isNull())
            return wm;
        const qint64 next = top->first().at(0).toLongLong();
        // `other_*`: what rows of no order line (adjustments) moved, for the orders' side of I4.
        const QString other = u"CASE WHEN NOT EXISTS (SELECT 1 FROM order_lines ol WHERE ol.order_id = w.order_id "
                              u"AND ol.sku = w.sku AND ol.bucket = w.bucket) THEN w.%1 ELSE 0 END"_s;
        auto fold = m_db.exec(
            u"INSERT INTO reconcile_checkpoints (sku, bucket, available, locked, sold, other_locked, other_sold) "
            u"SELECT w.sku, w.bucket, SUM(w.delta_available), SUM(w.delta_locked), SUM(w.delta_sold), SUM(%1), "
            u"SUM(%2) FROM (SELECT * FROM %3 AND id <= ?) w GROUP BY w.sku, w.bucket "
            u"ON CONFLICT (sku, bucket) DO UPDATE SET available = reconcile_checkpoints.available + excluded.available, "
            u"locked = reconcile_checkpoints.locked + excluded.locked, sold = reconcile_checkpoints.sold + excluded.sold, "
            u"other_locked = reconcile_checkpoints.other_locked + excluded.other_locked, "
            u"other_sold = reconcile_checkpoints.other_sold + excluded.other_sold"_s.arg(
                other.arg(u"delta_locked"_s), other.arg(u"delta_sold"_s), current->sql(m_db.dialect())),
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

Result<Levels3> LedgerWatermark::replay(const QString &sku, int bucket)
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
    return Levels3{row.at(0).toLongLong(), row.at(1).toLongLong(), row.at(2).toLongLong()};
}

} // namespace flashstock
