// Book: the buckets of a hot SKU. Splitting a line over several buckets, moving units
// between buckets and changing their number; every move is ledgered.

#include "store/Book.h"

#include "Identifiers.h"
#include "store/BookRows.h"
#include "store/Database.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr int kMaxBuckets = 1024;

} // namespace

Result<QList<BucketTake>> Book::takeSplit(const OrderLine &line, int buckets)
{
    // PostgreSQL: lock the SKU's buckets first (the lock order, BookLocks), so the figures
    // read are the figures written. SQLite: BEGIN IMMEDIATE already made this transaction
    // the only writer.
    QList<BookLocks::Bucket> all;
    for (int b = 0; b < buckets; ++b)
        all << BookLocks::Bucket{line.sku, b};
    if (auto r = m_locks.lock(all); !r)
        return std::unexpected(r.error());
    auto rows = m_db.exec(u"SELECT bucket, available FROM buckets WHERE sku = ? AND bucket < ? AND available > 0 "
                          u"ORDER BY bucket"_s,
                          {line.sku, buckets});
    if (!rows)
        return std::unexpected(rows.error());
    qint64 sum = 0;
    for (const QVariantList &r : rows->rows)
        sum += r.at(1).toLongLong();
    if (sum < line.qty)
        return QList<BucketTake>{};
    QList<BucketTake> parts;
    qint64 remaining = line.qty;
    for (const QVariantList &r : rows->rows) {
        if (remaining == 0)
            break;
        const int bucket = r.at(0).toInt();
        auto part = takeFromBucket(OrderLine{line.sku, std::min(remaining, r.at(1).toLongLong()), {}}, bucket);
        if (!part)
            return std::unexpected(part.error());
        if (!*part) // moved since the read (cannot happen under the locks): start again
            return fail(ErrorCode::Conflict,
                        u"bucket %1 of %2 changed during a split reserve"_s.arg(bucket).arg(line.sku));
        parts << **part;
        remaining -= (*part)->qty;
    }
    return parts;
}

Result<Adjustment> Book::rebalance(const QString &sku, int from, int to, qint64 qty)
{
    auto n = bucketCount(sku);
    if (!n)
        return std::unexpected(n.error());
    if (auto r = checkQuantity(qty); !r)
        return std::unexpected(r.error());
    for (const auto &[value, field] : {std::pair{from, u"from"_s}, std::pair{to, u"to"_s}}) {
        if (value < 0 || value >= *n)
            return fail(ErrorCode::InvalidArgument,
                        u"%1: bucket %2 does not exist (%3 has buckets 0 to %4)"_s.arg(field).arg(value).arg(sku).arg(*n - 1),
                        field);
    }
    if (from == to)
        return fail(ErrorCode::InvalidArgument, u"to: bucket %1 is also the source"_s.arg(to), u"to"_s);
    bool short_ = false;
    auto moved = m_db.write<Adjustment>([&](Transaction &tx) -> Result<Adjustment> {
        short_ = false;
        auto id = recordAdjustment(sku, u"rebalance"_s, qty,
                                   u"move %1 units from bucket %2 to bucket %3"_s.arg(qty).arg(from).arg(to));
        if (!id)
            return std::unexpected(id.error());
        // Rows in bucket order, as every multi-row transaction here.
        for (int bucket : {std::min(from, to), std::max(from, to)}) {
            auto done = adjustBucket(*id, sku, bucket, bucket == from ? -qty : qty);
            if (!done)
                return std::unexpected(done.error());
            if (!*done) {
                short_ = true;
                tx.rollbackOnly();
                return Adjustment{};
            }
        }
        return Adjustment{*id, sku, 0};
    });
    if (moved && short_)
        return fail(ErrorCode::InvalidArgument,
                    u"qty: bucket %1 of %2 has fewer than %3 available units"_s.arg(from).arg(sku).arg(qty), u"qty"_s);
    return moved;
}

Result<Adjustment> Book::setBucketCount(const QString &sku, int count)
{
    auto n = bucketCount(sku);
    if (!n)
        return std::unexpected(n.error());
    if (count < 1 || count > kMaxBuckets)
        return fail(ErrorCode::InvalidArgument, u"buckets must be from 1 to %1, got %2"_s.arg(kMaxBuckets).arg(count),
                    u"buckets"_s);
    auto changed = m_db.write<Adjustment>([&](Transaction &) -> Result<Adjustment> {
        // The SKU's row first: one change of its buckets at a time. Then its buckets in bucket
        // order (the lock order, BookLocks), then the new ones, which nobody else can want.
        auto upd = m_db.exec(u"UPDATE skus SET bucket_count = ? WHERE sku = ?"_s, {count, sku});
        if (!upd)
            return std::unexpected(upd.error());
        const QString lock = m_db.dialect() == Dialect::Postgres ? u" FOR UPDATE"_s : QString();
        if (auto r = m_db.exec(u"SELECT bucket FROM buckets WHERE sku = ? ORDER BY bucket"_s + lock, {sku}); !r)
            return std::unexpected(r.error());
        for (int b = 0; b < count; ++b) {
            auto r = m_db.exec(u"INSERT INTO buckets (sku, bucket, available, locked, sold, total) "
                               u"VALUES (?, ?, 0, 0, 0, 0) ON CONFLICT (sku, bucket) DO NOTHING"_s,
                               {sku, b});
            if (!r)
                return std::unexpected(r.error());
        }
        auto rows = m_db.exec(u"SELECT bucket, available FROM buckets WHERE sku = ? ORDER BY bucket"_s, {sku});
        if (!rows)
            return std::unexpected(rows.error());
        qint64 available = 0;
        for (const QVariantList &r : rows->rows)
            available += r.at(1).toLongLong();
        auto id = recordAdjustment(sku, u"rebalance"_s, 0,
                                   u"%1 buckets, %2 available units spread evenly"_s.arg(count).arg(available));
        if (!id)
            return std::unexpected(id.error());
        for (const QVariantList &r : rows->rows) {
            const int bucket = r.at(0).toInt();
            // Even shares, the remainder to the lowest buckets; none beyond `count`.
            const qint64 target = bucket >= count ? 0 : available / count + (bucket < available % count ? 1 : 0);
            const qint64 delta = target - r.at(1).toLongLong();
            if (delta == 0)
                continue;
            // The rows are locked and the target is >= 0, so the move cannot come up short.
            auto moved = adjustBucket(*id, sku, bucket, delta);
            if (!moved)
                return std::unexpected(moved.error());
            if (!*moved)
                return fail(ErrorCode::Internal, u"bucket %1 of %2 moved while its buckets were locked"_s.arg(bucket).arg(sku));
        }
        return Adjustment{*id, sku, 0};
    });
    if (changed)
        m_bucketCounts.insert(sku, count);
    return changed;
}

} // namespace flashstock
