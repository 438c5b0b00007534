#include "store/NaiveReserve.h"

#include "store/BookRows.h"
#include "store/BookSql.h"
#include "store/Database.h"

#include <QThread>

using namespace Qt::StringLiterals;

namespace flashstock {

Result<void> NaiveReserve::beforeTransaction(Database &db, const QString &order, const OrderLine &line, int buckets)
{
    auto read = db.exec(sql::bucketAvailable(), {line.sku, Book::preferredBucket(order, buckets)});
    if (!read)
        return std::unexpected(read.error());
    m_read.insert(line.sku, read->isEmpty() ? 0 : read->first().at(0).toLongLong());
    // Let another reserve read the same figure: the race under test.
    QThread::yieldCurrentThread();
    return {};
}

Result<QList<BucketTake>> NaiveReserve::take(Database &db, const QString &order, const OrderLine &line, int buckets)
{
    const qint64 seen = m_read.value(line.sku);
    if (seen < line.qty)
        return QList<BucketTake>{};
    const int bucket = Book::preferredBucket(order, buckets);
    // Total follows the figures it wrote (the row's CHECK would refuse them otherwise): each
    // lost update creates a unit out of nothing.
    auto upd = db.exec(u"UPDATE buckets SET available = ?, locked = locked + ?, total = ? + locked + sold "
                       u"WHERE sku = ? AND bucket = ? RETURNING available, locked, sold, total"_s,
                       {seen - line.qty, line.qty, seen, line.sku, bucket});
    if (!upd)
        return std::unexpected(upd.error());
    if (upd->isEmpty())
        return QList<BucketTake>{};
    return QList<BucketTake>{BucketTake{bucket, line.qty, levelsFrom(upd->first(), bucket)}};
}

} // namespace flashstock
