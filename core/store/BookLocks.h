#pragma once

#include "Domain.h"
#include "Result.h"

#include <QList>
#include <QString>

#include <optional>
#include <set>
#include <utility>

namespace flashstock {

class Database;

/// The book's lock order, kept by one write transaction at a time (docs/design.md, "Lock
/// order"). On PostgreSQL a transaction that moves stock takes bucket rows in (sku, bucket)
/// order before the rows of any order, and waits for a bucket only while it holds no order
/// row and no bucket later in that order. A bucket it needs out of that order (a borrow
/// below its preferred bucket, an order whose lines it did not know) is taken without
/// waiting (FOR UPDATE NOWAIT); if another transaction holds it, the call fails with
/// Conflict, the transaction starts again (Database::write) and its next attempt locks
/// that bucket first, in order, with the others (lockFirst). So no wait of a book write is
/// ever part of a cycle: book writes never deadlock.
///
/// SQLite has one writer at a time (BEGIN IMMEDIATE): nothing is locked here, the reads
/// are plain. Thread affinity: its Database's. Buckets not in the book are never locked
/// (nothing to wait for).
class BookLocks {
public:
    /// A bucket: (sku, bucket number).
    using Bucket = std::pair<QString, int>;

    explicit BookLocks(Database &db);

    /// A new transaction and its attempts: forgets what earlier attempts wanted.
    void newTransaction();
    /// A new attempt of the transaction (just after its BEGIN): holds nothing yet.
    void newAttempt();

    /// At the start of an attempt: locks `buckets` and every bucket an earlier attempt of
    /// the transaction found locked out of order, in (sku, bucket) order, in one statement,
    /// waiting as long as it takes. A single bucket (when nothing is wanted) is left to the
    /// first statement that changes it (see beforeChange). Errors as Database::exec().
    [[nodiscard]] Result<void> lockFirst(QList<Bucket> buckets);
    /// Locks `buckets` now, those not held yet: waiting for them if they all come after
    /// everything held (and no order row is held), else without waiting. Conflict if a
    /// bucket taken without waiting is locked by another transaction (its next attempt
    /// takes it first). Errors otherwise as Database::exec().
    [[nodiscard]] Result<void> lock(QList<Bucket> buckets);
    /// lock() for one bucket, and its levels as read under the lock; nullopt if the book has
    /// no such bucket. SQLite: a plain read.
    [[nodiscard]] Result<std::optional<BucketLevels>> lockAndRead(const QString &sku, int bucket);
    /// Before a statement that changes bucket (sku, bucket) and locks it only if it changes
    /// it (a guarded UPDATE): nothing to do if it is held or may be waited for; else it is
    /// locked now (lock()). Call took() if the statement changed it.
    [[nodiscard]] Result<void> beforeChange(const QString &sku, int bucket);
    /// The statement after beforeChange() changed bucket (sku, bucket): it is held.
    void took(const QString &sku, int bucket);
    /// The transaction holds rows of orders from now on: it waits for no bucket any more.
    void tookOrderRows() { m_orderRows = true; }

private:
    bool postgres() const;
    /// True if the transaction may wait for `b`: no order row held, and `b` comes after
    /// every bucket held.
    bool mayWaitFor(const Bucket &b) const;
    /// The error of a lock taken without waiting: a Conflict (another transaction holds one of
    /// `buckets`) is remembered for the next attempt and said so; any other error as it is.
    Error outOfOrder(const QList<Bucket> &buckets, const Error &error);

    Database &m_db;
    std::set<Bucket> m_held;   ///< locked by this attempt
    std::set<Bucket> m_wanted; ///< found locked out of order by an earlier attempt
    bool m_orderRows = false;  ///< this attempt holds rows of orders
};

} // namespace flashstock
