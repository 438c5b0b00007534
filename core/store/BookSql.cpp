#include "store/BookSql.h"

using namespace Qt::StringLiterals;

namespace flashstock::sql {

QString insertOrder(const QString &now)
{
    return u"INSERT INTO orders (order_id, user_id, status, version, created_at, expires_at) "
           u"VALUES (?, ?, 'PENDING', 1, %1, %1 + ?) ON CONFLICT (order_id) DO NOTHING RETURNING expires_at"_s.arg(now);
}

QString holdIsDue(const QString &now)
{
    return u"status = 'PENDING' AND expires_at <= %1"_s.arg(now);
}

// The guard is why concurrent reserves cannot oversell: the check and the write are one
// statement, so no other transaction can act between them (compare NaiveDeduct).
QString reserveBucket()
{
    return u"UPDATE buckets SET available = available - ?, locked = locked + ? "
           u"WHERE sku = ? AND bucket = ? AND available >= ? RETURNING available, locked, sold, total"_s;
}

QString confirmBucket()
{
    return u"UPDATE buckets SET locked = locked - ?, sold = sold + ? "
           u"WHERE sku = ? AND bucket = ? AND locked >= ? RETURNING available, locked, sold, total"_s;
}

QString releaseBucket()
{
    return u"UPDATE buckets SET locked = locked - ?, available = available + ? "
           u"WHERE sku = ? AND bucket = ? AND locked >= ? RETURNING available, locked, sold, total"_s;
}

QString insertOrderLine()
{
    return u"INSERT INTO order_lines (order_id, sku, bucket, qty, token) VALUES (?, ?, ?, ?, ?)"_s;
}

QString reserveOneLine(const QString &now)
{
    // Parameters in SELECT lists carry no type of their own: the casts give them theirs.
    QString guarded = reserveBucket();
    guarded.replace(u" RETURNING"_s, u" AND NOT EXISTS (SELECT 1 FROM orders WHERE order_id = ?) RETURNING"_s);
    return u"WITH b AS (%1), "_s.arg(guarded)
        + u"o AS (INSERT INTO orders (order_id, user_id, status, version, created_at, expires_at) "
          u"SELECT ?, ?, 'PENDING', 1, %1, %1 + CAST(? AS BIGINT) FROM b RETURNING expires_at), "_s.arg(now)
        + u"l AS (INSERT INTO order_lines (order_id, sku, bucket, qty, token) "
          u"SELECT ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT), ? FROM o), "_s
        + u"g AS ("_s + insertLedgerHead()
        + u"SELECT ?, 'RESERVE', ?, CAST(? AS BIGINT), ?, -CAST(? AS BIGINT), CAST(? AS BIGINT), 0, "
          u"b.available + CAST(? AS BIGINT), b.locked - CAST(? AS BIGINT), b.sold, b.available, b.locked, b.sold, "
          u"%1, ?, ? FROM b, o) "_s.arg(now)
        + u"SELECT o.expires_at, b.available, b.locked, b.sold, b.total FROM b, o"_s;
}

QString existingOrdersOf()
{
    return u"SELECT order_id FROM orders WHERE order_id IN (SELECT value FROM json_each(?))"_s;
}

QString bucketAvailable() { return u"SELECT available FROM buckets WHERE sku = ? AND bucket = ?"_s; }

QString insertOrdersOf(const QString &now)
{
    // WHERE true: SQLite would read ON CONFLICT as the SELECT's join constraint without it.
    return u"INSERT INTO orders (order_id, user_id, status, version, created_at, expires_at) "
           u"SELECT j.value ->> 0, j.value ->> 1, 'PENDING', 1, %1, %1 + (j.value ->> 2) FROM json_each(?) AS j "
           u"WHERE true ON CONFLICT (order_id) DO NOTHING RETURNING order_id, expires_at"_s.arg(now);
}

QString insertOrderLinesOf()
{
    return u"INSERT INTO order_lines (order_id, sku, bucket, qty, token) "
           u"SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4 FROM json_each(?) AS j"_s;
}

QString insertReserveLedgerOf(const QString &now)
{
    return insertLedgerHead()
        + u"SELECT j.value ->> 0, 'RESERVE', j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, "
          u"j.value ->> 5, j.value ->> 6, j.value ->> 7, j.value ->> 8, j.value ->> 9, j.value ->> 10, "
          u"j.value ->> 11, j.value ->> 12, %1, ?, ? FROM json_each(?) AS j"_s.arg(now);
}

QString savepoint() { return u"SAVEPOINT fs_order"_s; }

QString rollbackToSavepoint() { return u"ROLLBACK TO SAVEPOINT fs_order"_s; }

QString releaseSavepoint() { return u"RELEASE SAVEPOINT fs_order"_s; }

// The rows are locked as the sorted rows come out (LockRows sits above the Sort), so in
// (sku, bucket) order.
QString lockBucketsInOrder()
{
    return u"SELECT b.sku, b.bucket FROM buckets b JOIN unnest(?::text[], ?::int[]) AS w(sku, bucket) "
           u"ON b.sku = w.sku AND b.bucket = w.bucket ORDER BY b.sku, b.bucket FOR UPDATE OF b"_s;
}

QString bucketsOfOrders()
{
    return u"SELECT DISTINCT sku, bucket FROM order_lines WHERE order_id = ANY (?::text[])"_s;
}

QString insertLedgerHead()
{
    return u"INSERT INTO ledger (order_id, operation, sku, bucket, token, delta_available, delta_locked, delta_sold, "
           u"available_before, locked_before, sold_before, available_after, locked_after, sold_after, at, operator, "
           u"source) "_s;
}

QString insertLedger(const QString &now)
{
    return insertLedgerHead() + u"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, %1, ?, ?)"_s.arg(now);
}

} // namespace flashstock::sql

// --- benchmark (core/bench/BookBench) ---

#include "store/DbUrl.h"

namespace flashstock::sql {

QString beginWrite(Dialect dialect)
{
    return dialect == Dialect::Sqlite ? u"BEGIN IMMEDIATE"_s : u"BEGIN"_s;
}

QString commitWrite() { return u"COMMIT"_s; }

QString rollbackWrite() { return u"ROLLBACK"_s; }

QStringList sessionSetup(Dialect dialect)
{
    if (dialect == Dialect::Sqlite)
        return {u"PRAGMA journal_mode=WAL"_s, u"PRAGMA synchronous=NORMAL"_s, u"PRAGMA foreign_keys=ON"_s};
    return {};
}

QString durabilitySettings(Dialect dialect)
{
    if (dialect == Dialect::Sqlite)
        return u"SELECT 'journal_mode=' || journal_mode || ', synchronous=' || synchronous "
               u"FROM pragma_journal_mode(), pragma_synchronous()"_s;
    return u"SELECT 'fsync=' || current_setting('fsync') || ', synchronous_commit=' || "
           u"current_setting('synchronous_commit')"_s;
}

namespace {

/// `sql` with its positional `?` binds replaced, in order, by `values`.
QString substituteBinds(const QString &sql, const QStringList &values)
{
    QString out;
    qsizetype next = 0;
    for (QChar c : sql) {
        if (c == u'?' && next < values.size())
            out += values.at(next++);
        else
            out += c;
    }
    return out;
}

} // namespace

QString pgbenchSingleOrderScript(const QString &now)
{
    const QString update = substituteBinds(reserveBucket(), {u":qty"_s, u":qty"_s, u":sku"_s, u":bucket"_s, u":qty"_s});
    const QString ledger = substituteBinds(
        insertLedger(now),
        {u"'pgbench-' || txid_current()"_s, u"'RESERVE'"_s, u":sku"_s, u":bucket"_s, u"NULL"_s, u"-CAST(:qty AS BIGINT)"_s, u":qty"_s,
         u"0"_s, u"CAST(:available AS BIGINT) + CAST(:qty AS BIGINT)"_s, u"CAST(:locked AS BIGINT) - CAST(:qty AS BIGINT)"_s, u":sold"_s, u":available"_s, u":locked"_s, u":sold"_s,
         u"'bench'"_s, u"'pgbench'"_s});
    return u"BEGIN;\n"_s + update + u" \\gset\n"_s + ledger + u";\nCOMMIT;\n"_s;
}

QString createDatabase(const QString &name) { return u"CREATE DATABASE "_s + name; }

QString dropDatabase(const QString &name) { return u"DROP DATABASE IF EXISTS %1 WITH (FORCE)"_s.arg(name); }

QString serverTransactionCount()
{
    return u"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"_s;
}

QString naiveReadBucket() { return u"SELECT available, locked FROM buckets WHERE sku = ? AND bucket = 0"_s; }

QString naiveWriteBucket() { return u"UPDATE buckets SET available = ?, locked = ? WHERE sku = ? AND bucket = 0"_s; }

} // namespace flashstock::sql
