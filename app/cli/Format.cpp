#include "Format.h"

#include "Identifiers.h"

using namespace Qt::StringLiterals;

namespace flashstock {

QString ledgerTable(const QList<LedgerRow> &rows)
{
    if (rows.isEmpty())
        return u"(no ledger rows)\n"_s;
    QString out = u"%1  %2  %3  %4  %5  %6  %7  %8  %9\n"_s.arg(u"id"_s, 6)
                      .arg(u"at (UTC)"_s, -24)
                      .arg(u"operation"_s, -9)
                      .arg(u"order"_s, -16)
                      .arg(u"sku/bucket"_s, -14)
                      .arg(u"d_avail"_s, 8)
                      .arg(u"d_locked"_s, 8)
                      .arg(u"d_sold"_s, 7)
                      .arg(u"after a/l/s  operator  adjustment"_s);
    for (const LedgerRow &r : rows) {
        out += u"%1  %2  %3  %4  %5  %6  %7  %8  %9\n"_s.arg(r.id, 6)
                   .arg(isoTime(r.atMs), -24)
                   .arg(r.operation, -9)
                   .arg(r.order, -16)
                   .arg(u"%1/%2"_s.arg(r.sku).arg(r.bucket), -14)
                   .arg(r.deltaAvailable, 8)
                   .arg(r.deltaLocked, 8)
                   .arg(r.deltaSold, 7)
                   .arg(u"%1/%2/%3  %4  %5"_s.arg(r.after.available).arg(r.after.locked).arg(r.after.sold)
                            .arg(printable(r.operatorName), adjustmentText(r)));
    }
    return out;
}

QString linesText(const QList<OrderLine> &lines)
{
    QStringList parts;
    for (const OrderLine &l : lines)
        parts << u"%1:%2"_s.arg(l.sku).arg(l.qty);
    return parts.join(u',');
}

} // namespace flashstock
