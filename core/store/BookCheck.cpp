// Book::check(): the invariants I1-I4 and I6 of DESIGN.md, as SQL aggregates over the book.

#include "store/Book.h"
#include "store/Database.h"

#include <QHash>

using namespace Qt::StringLiterals;

namespace flashstock {

Result<BookCheck> Book::check()
{
    BookCheck out;
    auto i64 = [](const QVariant &v) { return v.toLongLong(); };

    // I1: no negative level, levels sum to total.
    auto i1 = m_db.exec(u"SELECT sku, bucket, available, locked, sold, total FROM buckets "
                        u"WHERE available < 0 OR locked < 0 OR sold < 0 OR available + locked + sold <> total"_s);
    if (!i1)
        return std::unexpected(i1.error());
    for (const QVariantList &r : i1->rows) {
        out.i1 = false;
        out.problems << u"I1: %1 bucket %2 has available %3 locked %4 sold %5 total %6"_s.arg(
            r.at(0).toString(), r.at(1).toString(), r.at(2).toString(), r.at(3).toString(), r.at(4).toString(),
            r.at(5).toString());
    }

    // I2: the ledger's deltas, replayed from zero (initial stock is an ADJUST row), give each bucket.
    auto i2 = m_db.exec(
        u"SELECT b.sku, b.bucket, b.available, b.locked, b.sold, "
        u"COALESCE(SUM(l.delta_available), 0), COALESCE(SUM(l.delta_locked), 0), COALESCE(SUM(l.delta_sold), 0) "
        u"FROM buckets b LEFT JOIN ledger l ON l.sku = b.sku AND l.bucket = b.bucket "
        u"GROUP BY b.sku, b.bucket, b.available, b.locked, b.sold "
        u"HAVING b.available <> COALESCE(SUM(l.delta_available), 0) OR b.locked <> COALESCE(SUM(l.delta_locked), 0) "
        u"OR b.sold <> COALESCE(SUM(l.delta_sold), 0)"_s);
    if (!i2)
        return std::unexpected(i2.error());
    for (const QVariantList &r : i2->rows) {
        out.i2 = false;
        out.problems << u"I2: %1 bucket %2 is %3/%4/%5 (available/locked/sold) but its ledger replays to %6/%7/%8"_s
                            .arg(r.at(0).toString(), r.at(1).toString(), r.at(2).toString(), r.at(3).toString(),
                                 r.at(4).toString(), r.at(5).toString(), r.at(6).toString(), r.at(7).toString());
    }

    // I3: each order line has exactly one RESERVE row of its qty, and the CONFIRM or RELEASE
    // row its status calls for, never both.
    auto i3 = m_db.exec(
        u"SELECT ol.order_id, ol.sku, ol.bucket, ol.qty, o.status, "
        u"SUM(CASE WHEN l.operation = 'RESERVE' THEN l.delta_locked ELSE 0 END), "
        u"SUM(CASE WHEN l.operation = 'RESERVE' THEN 1 ELSE 0 END), "
        u"SUM(CASE WHEN l.operation = 'CONFIRM' THEN l.delta_sold ELSE 0 END), "
        u"SUM(CASE WHEN l.operation = 'CONFIRM' THEN 1 ELSE 0 END), "
        u"SUM(CASE WHEN l.operation = 'RELEASE' THEN l.delta_available ELSE 0 END), "
        u"SUM(CASE WHEN l.operation = 'RELEASE' THEN 1 ELSE 0 END) "
        u"FROM order_lines ol JOIN orders o ON o.order_id = ol.order_id "
        u"LEFT JOIN ledger l ON l.order_id = ol.order_id AND l.sku = ol.sku AND l.bucket = ol.bucket "
        u"GROUP BY ol.order_id, ol.sku, ol.bucket, ol.qty, o.status"_s);
    if (!i3)
        return std::unexpected(i3.error());
    for (const QVariantList &r : i3->rows) {
        const qint64 qty = i64(r.at(3));
        const QString status = r.at(4).toString();
        const bool reserveOk = i64(r.at(6)) == 1 && i64(r.at(5)) == qty;
        const qint64 confirms = i64(r.at(8)), releases = i64(r.at(10));
        bool ok = reserveOk;
        if (status == u"PENDING"_s)
            ok = ok && confirms == 0 && releases == 0;
        else if (status == u"PAID"_s)
            ok = ok && confirms == 1 && i64(r.at(7)) == qty && releases == 0;
        else
            ok = ok && releases == 1 && i64(r.at(9)) == qty && confirms == 0;
        if (!ok) {
            out.i3 = false;
            out.problems << u"I3: order %1 (%2) line %3 bucket %4 qty %5 has %6 RESERVE, %7 CONFIRM, %8 RELEASE rows"_s
                                .arg(r.at(0).toString(), status, r.at(1).toString(), r.at(2).toString())
                                .arg(qty).arg(i64(r.at(6))).arg(confirms).arg(releases);
        }
    }
    auto orphans = m_db.exec(
        u"SELECT l.order_id, l.operation, l.sku, l.bucket FROM ledger l WHERE l.operation <> 'ADJUST' AND NOT EXISTS "
        u"(SELECT 1 FROM order_lines ol WHERE ol.order_id = l.order_id AND ol.sku = l.sku AND ol.bucket = l.bucket)"_s);
    if (!orphans)
        return std::unexpected(orphans.error());
    for (const QVariantList &r : orphans->rows) {
        out.i3 = false;
        out.problems << u"I3: ledger %1 row of order %2 on %3 bucket %4 matches no order line"_s.arg(
            r.at(1).toString(), r.at(0).toString(), r.at(2).toString(), r.at(3).toString());
    }

    // I4: sold and locked equal the PAID and PENDING order lines of each bucket.
    auto i4 = m_db.exec(
        u"SELECT b.sku, b.bucket, b.locked, b.sold, "
        u"COALESCE(SUM(CASE WHEN o.status = 'PENDING' THEN ol.qty ELSE 0 END), 0), "
        u"COALESCE(SUM(CASE WHEN o.status = 'PAID' THEN ol.qty ELSE 0 END), 0) "
        u"FROM buckets b LEFT JOIN order_lines ol ON ol.sku = b.sku AND ol.bucket = b.bucket "
        u"LEFT JOIN orders o ON o.order_id = ol.order_id "
        u"GROUP BY b.sku, b.bucket, b.locked, b.sold"_s);
    if (!i4)
        return std::unexpected(i4.error());
    for (const QVariantList &r : i4->rows) {
        if (i64(r.at(2)) != i64(r.at(4)) || i64(r.at(3)) != i64(r.at(5))) {
            out.i4 = false;
            out.problems << u"I4: %1 bucket %2 has locked %3 sold %4 but its orders hold %5 pending and %6 paid"_s.arg(
                r.at(0).toString(), r.at(1).toString(), r.at(2).toString(), r.at(3).toString(), r.at(4).toString(),
                r.at(5).toString());
        }
    }

    // I6: a refund only for an order that could not take the payment (closed, or paid with
    // another payment); the UNIQUE (order, payment) key keeps it to one each.
    auto i6 = m_db.exec(
        u"SELECT r.order_id, r.payment_ref, o.status FROM refunds r JOIN orders o ON o.order_id = r.order_id "
        u"WHERE o.status = 'PENDING' OR (o.status = 'PAID' AND o.payment_ref = r.payment_ref)"_s);
    if (!i6)
        return std::unexpected(i6.error());
    for (const QVariantList &r : i6->rows) {
        out.i6 = false;
        out.problems << u"I6: refund of payment %1 on order %2 which is %3"_s.arg(
            r.at(1).toString(), r.at(0).toString(), r.at(2).toString());
    }
    return out;
}

} // namespace flashstock
