#pragma once

// Internal to core/store: reading the book's rows into domain values.

#include "Domain.h"
#include "Identifiers.h"
#include "Result.h"

#include <QMap>
#include <QVariantList>

namespace flashstock {

/// Levels of `bucket` from a row whose columns from `offset` are available, locked, sold, total.
inline BucketLevels levelsFrom(const QVariantList &row, int bucket, int offset = 0)
{
    BucketLevels l;
    l.bucket = bucket;
    l.available = row.at(offset).toLongLong();
    l.locked = row.at(offset + 1).toLongLong();
    l.sold = row.at(offset + 2).toLongLong();
    l.total = row.at(offset + 3).toLongLong();
    return l;
}

/// An order's rows (one per SKU and bucket) as one line per SKU: the units summed, the
/// token the first reserve stored.
inline QList<OrderLine> linesBySku(const QList<OrderLine> &rows)
{
    QMap<QString, OrderLine> bySku;
    for (const OrderLine &l : rows) {
        OrderLine &m = bySku[l.sku];
        m.sku = l.sku;
        m.qty += l.qty;
        if (m.token.isEmpty())
            m.token = l.token;
    }
    return bySku.values();
}

/// An order status as the orders table stores it (`PENDING`, `PAID`, `CLOSED`, `ABANDONED`).
inline OrderStatus orderStatusFrom(const QString &s)
{
    if (s == QLatin1String("PENDING"))
        return OrderStatus::Pending;
    if (s == QLatin1String("PAID"))
        return OrderStatus::Paid;
    if (s == QLatin1String("CLOSED"))
        return OrderStatus::Closed;
    return OrderStatus::Abandoned;
}

/// The answer for an order the book does not hold, and, word for word, for one the asker
/// may not see (Actor::reaches): NotFound naming `order`.
inline Error unknownOrder(const QString &order)
{
    return Error{ErrorCode::NotFound, QStringLiteral("order %1 is unknown").arg(quoteForMessage(order)),
                 QStringLiteral("order")};
}

} // namespace flashstock
