#include "store/BookLocks.h"

#include "store/BookRows.h"
#include "store/BookSql.h"
#include "store/Database.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

BookLocks::BookLocks(Database &db)
    : m_db(db)
{
}

bool BookLocks::postgres() const
{
    return m_db.dialect() == Dialect::Postgres;
}

void BookLocks::newTransaction()
{
    m_wanted.clear();
    newAttempt();
}

void BookLocks::newAttempt()
{
    m_held.clear();
    m_orderRows = false;
}

bool BookLocks::mayWaitFor(const Bucket &b) const
{
    return !m_orderRows && (m_held.empty() || *m_held.crbegin() < b);
}

Result<void> BookLocks::lockFirst(QList<Bucket> buckets)
{
    if (!postgres())
        return {};
    std::sort(buckets.begin(), buckets.end());
    buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
    if (buckets.size() < 2 && m_wanted.empty())
        return {};
    buckets.append(QList<Bucket>(m_wanted.cbegin(), m_wanted.cend()));
    return lock(buckets);
}

Result<void> BookLocks::lock(QList<Bucket> buckets)
{
    if (!postgres())
        return {};
    std::sort(buckets.begin(), buckets.end());
    buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
    buckets.removeIf([&](const Bucket &b) { return m_held.contains(b); });
    if (buckets.isEmpty())
        return {};
    const bool wait = mayWaitFor(buckets.constFirst());
    QStringList skus, numbers;
    for (const auto &[sku, bucket] : std::as_const(buckets)) {
        skus << sku;
        numbers << QString::number(bucket);
    }
    auto locked = m_db.exec(sql::lockBucketsInOrder(wait), {sql::arrayLiteral(skus), sql::arrayLiteral(numbers)});
    if (!locked)
        return std::unexpected(wait ? locked.error() : outOfOrder(buckets, locked.error()));
    for (const QVariantList &row : locked->rows)
        m_held.insert({row.at(0).toString(), row.at(1).toInt()});
    return {};
}

Result<std::optional<BucketLevels>> BookLocks::lockAndRead(const QString &sku, int bucket)
{
    const Bucket b{sku, bucket};
    const bool wait = !postgres() || m_held.contains(b) || mayWaitFor(b);
    auto row = m_db.exec(sql::lockBucket(m_db.dialect(), wait), {sku, bucket});
    if (!row)
        return std::unexpected(wait ? row.error() : outOfOrder({b}, row.error()));
    if (row->isEmpty())
        return std::optional<BucketLevels>{};
    took(sku, bucket);
    return std::optional<BucketLevels>{levelsFrom(row->first(), bucket)};
}

Error BookLocks::outOfOrder(const QList<Bucket> &buckets, const Error &error)
{
    if (error.code != ErrorCode::Conflict)
        return error;
    m_wanted.insert(buckets.cbegin(), buckets.cend());
    return {ErrorCode::Conflict,
            u"bucket %1 of %2, needed out of lock order, is locked by another transaction: this one starts again "
            u"with it locked first, in order (%3)"_s.arg(buckets.first().second).arg(buckets.first().first,
                                                                                      error.message),
            {}};
}

Result<void> BookLocks::beforeChange(const QString &sku, int bucket)
{
    if (!postgres())
        return {};
    const Bucket b{sku, bucket};
    if (m_held.contains(b) || mayWaitFor(b))
        return {};
    return lock({b});
}

void BookLocks::took(const QString &sku, int bucket)
{
    if (postgres())
        m_held.insert({sku, bucket});
}

} // namespace flashstock
