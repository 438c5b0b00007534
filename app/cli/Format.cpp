#include "Format.h"

#include "Identifiers.h"

#include <QDateTime>

using namespace Qt::StringLiterals;

namespace flashstock {

QString isoTime(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs);
}

QJsonObject levelsJson(const SkuLevels &levels)
{
    return {{u"available"_s, levels.available}, {u"locked"_s, levels.locked},
            {u"sold"_s, levels.sold}, {u"total"_s, levels.total}};
}

QJsonArray bucketsJson(const SkuLevels &levels)
{
    QJsonArray out;
    for (const BucketLevels &b : levels.buckets)
        out.append(QJsonObject{{u"bucket"_s, b.bucket}, {u"available"_s, b.available}, {u"locked"_s, b.locked},
                               {u"sold"_s, b.sold}, {u"total"_s, b.total}});
    return out;
}

QJsonObject ledgerRowJson(const LedgerRow &row)
{
    QJsonObject out{{u"id"_s, row.id},
            {u"order"_s, row.order},
            {u"operation"_s, row.operation},
            {u"sku"_s, row.sku},
            {u"bucket"_s, row.bucket},
            {u"delta_available"_s, row.deltaAvailable},
            {u"delta_locked"_s, row.deltaLocked},
            {u"delta_sold"_s, row.deltaSold},
            {u"after"_s, QJsonObject{{u"available"_s, row.after.available}, {u"locked"_s, row.after.locked},
                                     {u"sold"_s, row.after.sold}}},
            {u"token"_s, row.token.isEmpty() ? QJsonValue() : QJsonValue(row.token)},
            {u"operator"_s, row.operatorName},
            {u"source"_s, row.source},
            {u"at"_s, isoTime(row.atMs)}};
    if (!row.adjustmentKind.isEmpty())
        out.insert(u"adjustment"_s, QJsonObject{{u"kind"_s, row.adjustmentKind},
                                                {u"units"_s, row.adjustmentUnits},
                                                {u"reason"_s, row.reason},
                                                {u"discrepancy"_s, row.discrepancy > 0 ? QJsonValue(row.discrepancy)
                                                                                       : QJsonValue()}});
    return out;
}

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

QJsonArray tokensJson(const QList<OrderLine> &lines)
{
    QJsonArray out;
    for (const OrderLine &l : lines)
        if (!l.token.isEmpty())
            out.append(l.token);
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
