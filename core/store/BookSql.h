#pragma once

#include <QString>

namespace flashstock {
enum class Dialect; // store/DbUrl.h
}

namespace flashstock::sql {

// The statements of the book's hot path, shared by Book and by the benchmark that runs
// them bare (without the engine around them) to measure the engine's overhead.
// `now` is Database::nowMsExpr(). Binds are positional, in the order given.

/// INSERT a PENDING order, skipped if the id exists. Binds: order, user, hold ms, created by
/// (Actor::operatorName).
/// Returns expires_at when inserted, no row when the order existed.
QString insertOrder(const QString &now);
/// Guarded reserve of one bucket: available -> locked only if `available >= qty`.
/// Binds: qty, qty, sku, bucket, qty. Returns the levels after, no row when short.
QString reserveBucket();
/// Guarded confirm: locked -> sold only if `locked >= qty`. Binds as reserveBucket.
QString confirmBucket();
/// Guarded release: locked -> available only if `locked >= qty`. Binds as reserveBucket.
QString releaseBucket();
/// The rule of a hold that is due: a PENDING order whose expires_at has passed by `now` (an
/// SQL expression or a `?` bind, ms since the epoch). On `orders`; no alias.
QString holdIsDue(const QString &now);
/// INSERT an order line. Binds: order, sku, bucket, qty, token.
QString insertOrderLine();
/// INSERT a ledger row. Binds: order, operation, sku, bucket, token, three deltas, the
/// levels before (3) and after (3), operator, source.
QString insertLedger(const QString &now);
/// PostgreSQL: the whole reserve of a one-line order in one statement (one round trip):
/// the guarded UPDATE of reserveBucket(), taken only if the order does not exist yet, then
/// the order row (as insertOrder()), its line (insertOrderLine()) and its RESERVE ledger row
/// (insertLedger(), the levels the UPDATE returned), each only if the step before it took
/// place. Binds: qty, qty, sku, bucket, qty, order (the guarded UPDATE); order, user, hold
/// ms, created by (the order); order, sku, bucket, qty, token (the line); order, sku, bucket, token,
/// qty, qty, qty, qty, operator, source (the ledger). One row (expires_at, then the
/// bucket's levels after) when reserved; no row, and nothing written, when the order exists
/// or the bucket is short.
QString reserveOneLine(const QString &now);
/// A batch's many one-line orders at once (Book::reserveGrouped), both dialects: the rows
/// come as one JSON array bound to `?` (SQLite json_each, PostgreSQL json_array_elements),
/// one element (an array) per row, so the statement's text is the same for any batch size
/// and a batch costs the same few round trips whatever its size. Only that row source
/// differs between the dialects. The ids among elements `[order]` that exist.
/// PostgreSQL binds a text array literal of the ids instead (`{a,b}`, ids that need no
/// quoting): its planner knows an array's length, so it reads the primary key; given the
/// JSON it guessed 100 rows and hashed them against a scan of every order of the book.
QString existingOrdersOf(Dialect dialect);
/// reserveBucket() for many buckets in one statement: each element `[sku, bucket, qty]`
/// (distinct buckets), each bucket moved only if `available >= qty`. Returns (sku, bucket,
/// then the levels after as reserveBucket()) of each bucket moved; a short bucket is not
/// changed and not returned. PostgreSQL locks the rows in the order it meets them: with
/// more than one bucket the caller has locked them in order first (lockBucketsInOrder()).
QString reserveBucketsOf(Dialect dialect);
/// insertOrder() for many: each element `[order, user or null, hold ms, created by]`. Returns
/// (order_id, expires_at) of each inserted order.
QString insertOrdersOf(Dialect dialect, const QString &now);
/// insertOrderLine() for many: each element `[order, sku, bucket, qty, token or null]`.
QString insertOrderLinesOf(Dialect dialect);
/// insertLedger() for many RESERVE rows. Binds: the array; each element `[order, sku,
/// bucket, token or null, three deltas, levels before (3), after (3), operator, source]`.
QString insertReserveLedgerOf(Dialect dialect, const QString &now);
/// A bucket's available units, read without a lock (NaiveReserve's read-check-write, the
/// counterexample). Binds: sku, bucket.
QString bucketAvailable();
/// SQLite: a connection that leaves the WAL's checkpoints to another (`PRAGMA
/// wal_autocheckpoint=0`; durability is unchanged, only who copies the WAL into the file).
QString walAutoCheckpointOff();
/// SQLite: copies the WAL's committed frames into the database file and syncs it, without
/// waiting for readers or writers (`PRAGMA wal_checkpoint(PASSIVE)`). One row: busy flag,
/// frames in the WAL, frames checkpointed.
QString walCheckpointPassive();
/// One order of a batch: its savepoint, the way back to it, and keeping what it did.
QString savepoint();
QString rollbackToSavepoint();
QString releaseSavepoint();
/// PostgreSQL: locks buckets in (sku, bucket) order (BookLocks), waiting for each as long as
/// it takes, or with `wait` false failing at once (lock_not_available, 55P03) if another
/// transaction holds one. Binds: SKU ids and bucket numbers as array literals (`{A,B}`,
/// `{0,3}`), pairwise.
QString lockBucketsInOrder(bool wait);
/// One bucket's levels (available, locked, sold, total); PostgreSQL: locked for the
/// transaction (FOR UPDATE, or with `wait` false FOR UPDATE NOWAIT). Binds: sku, bucket.
QString lockBucket(Dialect dialect, bool wait);
/// `{a,b,c}`: a PostgreSQL array literal of identifiers that need no quoting (SKU and
/// order ids are `[A-Za-z0-9._-]`, bucket numbers are digits), to bind as `?::text[]`.
QString arrayLiteral(const QStringList &items);
/// PostgreSQL: the (sku, bucket) pairs the lines of some orders hold. Binds: the order ids
/// as an array literal.
QString bucketsOfOrders();
/// The head of insertLedger(): the table and its columns without the VALUES, for a bulk
/// INSERT ... SELECT of test data. Columns in the order of insertLedger()'s binds, with
/// `at` (ms, database clock) between the levels after and the operator.
QString insertLedgerHead();

} // namespace flashstock::sql

// --- benchmark (core/bench/BookBench): what it needs besides the hot path above ---

#include <QStringList>

namespace flashstock::sql {

/// Opens a write transaction the way Database::write does: `BEGIN IMMEDIATE` on SQLite
/// (take the write lock first, so a transaction never fails BUSY upgrading it), `BEGIN` on
/// PostgreSQL.
QString beginWrite(Dialect dialect);
/// `COMMIT`.
QString commitWrite();
/// `ROLLBACK`.
QString rollbackWrite();
/// Statements Database runs on every new connection before use (SQLite: WAL,
/// synchronous=NORMAL, foreign keys on, temporary files and statement journals in memory);
/// none for PostgreSQL. A bare connection runs them
/// too, so it pays the same per-commit costs.
QStringList sessionSetup(Dialect dialect);
/// One row, one text column: how durable a commit is on this connection, for people
/// (PostgreSQL `fsync=on, synchronous_commit=on`; SQLite `journal_mode=wal, synchronous=1`).
QString durabilitySettings(Dialect dialect);
/// PostgreSQL's own benchmark tool, pgbench (`-M prepared`), running the single-order
/// transaction of the book's reserve: BEGIN; the guarded UPDATE of one bucket
/// (reserveBucket()); the RESERVE ledger row (insertLedger(), its order id unique per
/// transaction, its levels those the UPDATE returned); COMMIT. Variables (`-D`): sku,
/// bucket, qty. The baseline the book's batches are measured against.
QString pgbenchSingleOrderScript(const QString &now);
/// PostgreSQL, in autocommit: create / drop (forcing other sessions off) a database.
/// `name` must already be a plain identifier (`[a-z0-9_]`): it is not quoted here.
QString createDatabase(const QString &name);
QString dropDatabase(const QString &name);
/// PostgreSQL: one row, one column: the server's count of finished transactions (commits
/// and rollbacks) in the current database.
QString serverTransactionCount();
/// THE COUNTEREXAMPLE's two statements (bench/NaiveDeduct), unguarded on purpose: read
/// bucket 0 of a SKU (binds: sku; returns available, locked), write it back (binds:
/// available, locked, sku). Never used by the engine.
QString naiveReadBucket();
QString naiveWriteBucket();

} // namespace flashstock::sql
