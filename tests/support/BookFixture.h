#pragma once

#include "store/DbUrl.h"

#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace flashstock::test {

/// The book backends every book test runs on: "sqlite" and "postgresql".
QStringList bookBackends();

/// Adds a `backend` column with one row per backend to the current QtTest data table.
void addBackendRows();

/// A fresh, empty book of record for one test: a SQLite file in a temporary directory, or a
/// new database on the PostgreSQL server named by FLASHSTOCK_TEST_PG_URL (started by
/// scripts/with-test-servers.sh), dropped again by the destructor.
/// Without that server: the test fails under CI, and is skipped otherwise
/// (test::missingServerFails).
class FreshBook {
public:
    explicit FreshBook(const QString &backend);
    ~FreshBook();
    FreshBook(const FreshBook &) = delete;
    FreshBook &operator=(const FreshBook &) = delete;

    /// Empty if the book is ready; else why not (use with requireReady()).
    QString problem() const { return m_problem; }
    /// True when the server is missing on a developer machine (the test should QSKIP).
    bool skip() const { return m_skip; }
    const DbUrl &url() const { return m_url; }
    /// The URL as text, for `--db`.
    QString urlText() const { return m_urlText; }
    /// PostgreSQL only: `false` ends every session on this book and refuses new ones (as a
    /// book whose host went away looks to its clients); `true` lets sessions in again. Empty
    /// when done, else why not.
    QString setReachable(bool reachable);

private:
    DbUrl m_url;
    QString m_urlText;
    QString m_problem;
    bool m_skip = false;
    QString m_pgDatabase;
    DbUrl m_pgAdmin;
    std::unique_ptr<QTemporaryDir> m_dir;
};

/// A second PostgreSQL session on book `url` holding the bucket rows of `sku` locked (SELECT
/// ... FOR UPDATE in a transaction left open on purpose), so a writer of that SKU waits in
/// the book. Thread affinity: the creating thread. release() rolls back; so does the
/// destructor, which also closes the session.
class BucketRowsHeld {
public:
    BucketRowsHeld(const DbUrl &url, const QString &sku);
    ~BucketRowsHeld();
    BucketRowsHeld(const BucketRowsHeld &) = delete;
    BucketRowsHeld &operator=(const BucketRowsHeld &) = delete;

    /// Empty when the rows are held; else why not.
    QString problem() const { return m_problem; }
    /// Rolls the holding transaction back (the rows are free); false if that failed.
    bool release();

private:
    QString m_name;
    QString m_problem;
};

} // namespace flashstock::test

/// Opens a FreshBook named `var` for `backend`, or fails/skips the test.
#define FS_FRESH_BOOK(var, backend)                                                                                     \
    flashstock::test::FreshBook var(backend);                                                                           \
    if (var.skip())                                                                                                     \
        QSKIP(qPrintable(var.problem()));                                                                               \
    if (!var.problem().isEmpty())                                                                                       \
        QFAIL(qPrintable(var.problem()));
