#include "store/BookSql.h"

#include "store/DbUrl.h"

#include <initializer_list>

using namespace Qt::StringLiterals;

namespace flashstock::sql {

namespace {

// One column list per table the reserve writes, shared by its three shapes: one order
// (VALUES), one order in one statement (reserveOneLine's CTE) and many (the *Of forms).

QString insertOrderHead()
{
    return u"INSERT INTO orders (order_id, user_id, status, version, created_at, expires_at, created_by) "_s;
}

/// A new order's values after insertOrderHead(), from SQL expressions: PENDING, version 1,
/// created now by `createdBy`, its hold `holdMs` after that.
QString newOrderValues(const QString &order, const QString &user, const QString &holdMs, const QString &createdBy,
                       const QString &now)
{
    return u"%1, %2, 'PENDING', 1, %5, %5 + %3, %4"_s.arg(order, user, holdMs, createdBy, now);
}

QString insertOrderLineHead() { return u"INSERT INTO order_lines (order_id, sku, bucket, qty, token) "_s; }

struct JsonColumn {
    const char16_t *name;
    const char16_t *type; ///< TEXT or BIGINT
};

/// `(SELECT CAST(j.value ->> 0 AS type) AS name, ... FROM <rows> AS j) AS w`: the elements
/// of the JSON array bound to `?`, one row each, element i of each as column i. The row
/// source is the one thing that differs between the dialects.
QString jsonTable(Dialect dialect, std::initializer_list<JsonColumn> columns)
{
    QStringList fields;
    int i = 0;
    for (const JsonColumn &c : columns)
        fields << u"CAST(j.value ->> %1 AS %2) AS %3"_s.arg(i++).arg(QStringView(c.type), QStringView(c.name));
    const QString rows = dialect == Dialect::Sqlite ? u"json_each(?) AS j"_s
                                                    : u"json_array_elements(CAST(? AS json)) AS j(value)"_s;
    return u"(SELECT %1 FROM %2) AS w"_s.arg(fields.join(u", "_s), rows);
}

} // namespace

QString insertOrder(const QString &now)
{
    return insertOrderHead() + u"VALUES ("_s + newOrderValues(u"?"_s, u"?"_s, u"?"_s, u"?"_s, now)
        + u") ON CONFLICT (order_id) DO NOTHING RETURNING expires_at"_s;
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

QString insertOrderLine() { return insertOrderLineHead() + u"VALUES (?, ?, ?, ?, ?)"_s; }

QString reserveOneLine(const QString &now)
{
    // Parameters in SELECT lists carry no type of their own: the casts give them theirs.
    QString guarded = reserveBucket();
    guarded.replace(u" RETURNING"_s, u" AND NOT EXISTS (SELECT 1 FROM orders WHERE order_id = ?) RETURNING"_s);
    return u"WITH b AS (%1), "_s.arg(guarded)
        + u"o AS ("_s + insertOrderHead() + u"SELECT "_s
        + newOrderValues(u"?"_s, u"?"_s, u"CAST(? AS BIGINT)"_s, u"CAST(? AS TEXT)"_s, now)
        + u" FROM b RETURNING expires_at), "_s
        + u"l AS ("_s + insertOrderLineHead() + u"SELECT ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT), ? FROM o), "_s
        + u"g AS ("_s + insertLedgerHead()
        + u"SELECT ?, 'RESERVE', ?, CAST(? AS BIGINT), ?, -CAST(? AS BIGINT), CAST(? AS BIGINT), 0, "
          u"b.available + CAST(? AS BIGINT), b.locked - CAST(? AS BIGINT), b.sold, b.available, b.locked, b.sold, "
          u"%1, ?, ? FROM b, o) "_s.arg(now)
        + u"SELECT o.expires_at, b.available, b.locked, b.sold, b.total FROM b, o"_s;
}

QString existingOrdersOf(Dialect dialect)
{
    if (dialect == Dialect::Postgres)
        return u"SELECT order_id FROM orders WHERE order_id = ANY (CAST(? AS text[]))"_s;
    return u"SELECT order_id FROM orders WHERE order_id IN (SELECT w.order_id FROM %1)"_s.arg(
        jsonTable(dialect, {{u"order_id", u"TEXT"}}));
}

// The guard of reserveBucket(), per bucket.
QString reserveBucketsOf(Dialect dialect)
{
    return u"UPDATE buckets SET available = available - w.qty, locked = locked + w.qty FROM %1 "
           u"WHERE buckets.sku = w.sku AND buckets.bucket = w.bucket AND buckets.available >= w.qty "
           u"RETURNING buckets.sku, buckets.bucket, buckets.available, buckets.locked, buckets.sold, buckets.total"_s
        .arg(jsonTable(dialect, {{u"sku", u"TEXT"}, {u"bucket", u"BIGINT"}, {u"qty", u"BIGINT"}}));
}

QString bucketAvailable() { return u"SELECT available FROM buckets WHERE sku = ? AND bucket = ?"_s; }

QString insertOrdersOf(Dialect dialect, const QString &now)
{
    // WHERE true: SQLite would read ON CONFLICT as the SELECT's join constraint without it.
    return insertOrderHead() + u"SELECT "_s
        + newOrderValues(u"w.order_id"_s, u"w.user_id"_s, u"w.hold_ms"_s, u"w.created_by"_s, now) + u" FROM "_s
        + jsonTable(dialect, {{u"order_id", u"TEXT"}, {u"user_id", u"TEXT"}, {u"hold_ms", u"BIGINT"},
                              {u"created_by", u"TEXT"}})
        + u" WHERE true ON CONFLICT (order_id) DO NOTHING RETURNING order_id, expires_at"_s;
}

QString insertOrderLinesOf(Dialect dialect)
{
    return insertOrderLineHead() + u"SELECT w.order_id, w.sku, w.bucket, w.qty, w.token FROM "_s
        + jsonTable(dialect, {{u"order_id", u"TEXT"}, {u"sku", u"TEXT"}, {u"bucket", u"BIGINT"}, {u"qty", u"BIGINT"},
                              {u"token", u"TEXT"}});
}

QString insertReserveLedgerOf(Dialect dialect, const QString &now)
{
    return insertLedgerHead()
        + u"SELECT w.order_id, 'RESERVE', w.sku, w.bucket, w.token, w.da, w.dl, w.ds, w.ab, w.lb, w.sb, w.aa, w.la, "
          u"w.sa, %1, w.operator, w.source FROM "_s.arg(now)
        + jsonTable(dialect, {{u"order_id", u"TEXT"}, {u"sku", u"TEXT"}, {u"bucket", u"BIGINT"}, {u"token", u"TEXT"},
                              {u"da", u"BIGINT"}, {u"dl", u"BIGINT"}, {u"ds", u"BIGINT"}, {u"ab", u"BIGINT"},
                              {u"lb", u"BIGINT"}, {u"sb", u"BIGINT"}, {u"aa", u"BIGINT"}, {u"la", u"BIGINT"},
                              {u"sa", u"BIGINT"}, {u"operator", u"TEXT"}, {u"source", u"TEXT"}});
}

QString walAutoCheckpointOff() { return u"PRAGMA wal_autocheckpoint=0"_s; }

QString walCheckpointPassive() { return u"PRAGMA wal_checkpoint(PASSIVE)"_s; }

QString savepoint() { return u"SAVEPOINT fs_order"_s; }

QString rollbackToSavepoint() { return u"ROLLBACK TO SAVEPOINT fs_order"_s; }

QString releaseSavepoint() { return u"RELEASE SAVEPOINT fs_order"_s; }

// The rows are locked as the sorted rows come out (LockRows sits above the Sort), so in
// (sku, bucket) order.
QString lockBucketsInOrder(bool wait)
{
    return u"SELECT b.sku, b.bucket FROM buckets b JOIN unnest(?::text[], ?::int[]) AS w(sku, bucket) "
           u"ON b.sku = w.sku AND b.bucket = w.bucket ORDER BY b.sku, b.bucket FOR UPDATE OF b"_s
        + (wait ? QString() : u" NOWAIT"_s);
}

QString lockBucket(Dialect dialect, bool wait)
{
    const QString read = u"SELECT available, locked, sold, total FROM buckets WHERE sku = ? AND bucket = ?"_s;
    if (dialect != Dialect::Postgres)
        return read;
    return read + (wait ? u" FOR UPDATE"_s : u" FOR UPDATE NOWAIT"_s);
}

QString arrayLiteral(const QStringList &items) { return u'{' + items.join(u',') + u'}'; }

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

namespace flashstock::sql {

QString beginWrite(Dialect dialect)
{
    return dialect == Dialect::Sqlite ? u"BEGIN IMMEDIATE"_s : u"BEGIN"_s;
}

QString commitWrite() { return u"COMMIT"_s; }

QString rollbackWrite() { return u"ROLLBACK"_s; }

QStringList sessionSetup(Dialect dialect)
{
    // temp_store=MEMORY: a statement journal (the pages a statement that writes many rows
    // changes, kept to undo it alone) stays in memory; on disk it was a temporary file
    // created, written page by page and deleted by each batch's INSERTs past 64 KiB.
    if (dialect == Dialect::Sqlite)
        return {u"PRAGMA journal_mode=WAL"_s, u"PRAGMA synchronous=NORMAL"_s, u"PRAGMA foreign_keys=ON"_s,
                u"PRAGMA temp_store=MEMORY"_s};
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
