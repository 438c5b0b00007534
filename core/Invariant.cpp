#include "Invariant.h"

#include <QStringList>

using namespace Qt::StringLiterals;

namespace flashstock {

QString invariantName(Invariant invariant)
{
    for (int i = 0; i < int(std::size(kInvariants)); ++i)
        if (kInvariants[i] == invariant)
            return u"I%1"_s.arg(i + 1);
    return {};
}

QString invariantNames(Invariants set)
{
    QStringList names;
    for (Invariant i : kInvariants)
        if (set.testFlag(i))
            names << invariantName(i);
    return names.join(u", "_s);
}

InvariantBreach InvariantBreach::at(Invariant invariant, const QString &sku, int bucket, const QString &order)
{
    switch (invariant) {
    case Invariant::I1:
    case Invariant::I2:
    case Invariant::I4: return {invariant, sku, bucket, {}};
    case Invariant::I3: return {invariant, sku, bucket, order};
    case Invariant::I5: return {invariant, sku, -1, {}};
    case Invariant::I6: return {invariant, {}, -1, order};
    }
    return {invariant, sku, bucket, order};
}

QString InvariantBreach::toString() const
{
    QString where = sku;
    if (bucket >= 0)
        where += u"/%1"_s.arg(bucket);
    if (!order.isEmpty())
        where += (where.isEmpty() ? QString() : u" "_s) + order;
    return invariantName(invariant) + u" "_s + where;
}

} // namespace flashstock
