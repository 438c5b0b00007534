#pragma once

#include "Result.h"

#include <QString>

namespace flashstock {

class Database;

/// THE COUNTEREXAMPLE, never used by the engine: the read-check-write deduction that teams
/// write first (read available, subtract in C++, write the new value back). Two buyers who
/// read the same figure both "succeed" and one unit is sold twice: oversell. It lives in the
/// benchmark library (its two statements beside the guarded ones in store/BookSql) so that
/// a test and the benchmark can prove the bug the guarded UPDATE in Book exists to prevent
/// (`UPDATE ... WHERE available >= qty`, affected rows checked). Works on bucket 0 of a
/// SKU, in autocommit, as the naive code does.
class NaiveDeduct {
public:
    explicit NaiveDeduct(Database &db);
    /// Reads, checks and writes back. True if it believes it sold `qty` units.
    [[nodiscard]] Result<bool> reserve(const QString &sku, qint64 qty);

private:
    Database &m_db;
};

} // namespace flashstock
