#include "Expiry.h"

namespace flashstock {

QString ExpirerBeat::host() const
{
    const QString where = expirer.section(u'@', 1);
    const qsizetype colon = where.lastIndexOf(u':');
    return colon < 0 ? where : where.left(colon);
}

qint64 ExpirerBeat::pid() const
{
    const QString where = expirer.section(u'@', 1);
    const qsizetype colon = where.lastIndexOf(u':');
    return colon < 0 ? 0 : where.mid(colon + 1).toLongLong();
}

qint64 ExpiryStatus::overdueUnits() const
{
    qint64 n = 0;
    for (const OverdueHolds &h : overdue)
        n += h.units;
    return n;
}

QList<ExpirerBeat> ExpiryStatus::alive() const
{
    QList<ExpirerBeat> out;
    for (const ExpirerBeat &b : expirers)
        if (b.isAlive(nowMs))
            out << b;
    return out;
}

OverdueHolds ExpiryStatus::overdueOf(const QString &sku) const
{
    for (const OverdueHolds &h : overdue)
        if (h.sku == sku)
            return h;
    return OverdueHolds{sku, 0, 0, 0};
}

} // namespace flashstock
