#include "bench/NaiveDeduct.h"

#include "store/BookSql.h"
#include "store/Database.h"

#include <QThread>

using namespace Qt::StringLiterals;

namespace flashstock {

NaiveDeduct::NaiveDeduct(Database &db)
    : m_db(db)
{
}

Result<bool> NaiveDeduct::reserve(const QString &sku, qint64 qty)
{
    auto read = m_db.exec(sql::naiveReadBucket(), {sku});
    if (!read)
        return std::unexpected(read.error());
    if (read->isEmpty())
        return fail(ErrorCode::InvalidArgument, u"sku %1 is unknown"_s.arg(sku), u"sku"_s);
    const qint64 available = read->first().at(0).toLongLong();
    const qint64 locked = read->first().at(1).toLongLong();
    if (available < qty)
        return false;
    // Application work between the read and the write (validation, pricing, logging): the
    // window in which another buyer reads the same figure.
    QThread::yieldCurrentThread();
    auto write = m_db.exec(sql::naiveWriteBucket(), {available - qty, locked + qty, sku});
    if (!write)
        return std::unexpected(write.error());
    return true;
}

} // namespace flashstock
