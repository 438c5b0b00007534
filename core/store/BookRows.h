#pragma once

// Internal to core/store: reading the book's rows into domain values.

#include "Domain.h"

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

} // namespace flashstock
