#pragma once

#include "Expiry.h"
#include "Result.h"

namespace flashstock {

class Database;

/// Holds past their expiry and the expirers' heartbeats in the book of record (table
/// `expirer_heartbeats`). Thread affinity: its Database's. Times are ms since the epoch by
/// the database clock.
class ExpiryStore {
public:
    explicit ExpiryStore(Database &db);

    /// Records one pass of expirer `expirer` (`KIND@HOST:PID`) of `kind` that promised a pass
    /// every `everyMs` and released `released` orders, at the database's now; `address`: where
    /// a server listens (`HOST:PORT`), else empty. Forgets heartbeats older than a day.
    /// InvalidArgument (field `every`) unless everyMs > 0.
    [[nodiscard]] Result<void> beat(const QString &expirer, const QString &kind, const QString &operatorName,
                                    qint64 everyMs, qint64 released, const QString &address = {});
    /// The overdue holds by SKU and every heartbeat of the last day, as of the database's now.
    [[nodiscard]] Result<ExpiryStatus> status();

private:
    Database &m_db;
};

} // namespace flashstock
