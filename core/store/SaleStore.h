#pragma once

#include "Domain.h"
#include "Result.h"

#include <QHash>
#include <QList>

#include <optional>

namespace flashstock {

class Database;

/// Flash sales in the book of record (table `sales`). Thread affinity: its Database's.
class SaleStore {
public:
    explicit SaleStore(Database &db);

    /// Defines a sale of `sku` (status scheduled): window `startMs`..`endMs` (ms since the
    /// epoch, 0 = unbounded), hold in seconds (1..2592000), per-user limit in units (0 = none).
    /// `units` is the SKU's available stock now. InvalidArgument for an unknown SKU, an end
    /// not after the start, or a value out of range.
    [[nodiscard]] Result<Sale> create(const QString &sku, qint64 startMs, qint64 endMs, qint64 holdSeconds,
                                      qint64 perUserLimit, const QString &operatorName);
    /// Sets the status (idempotent): scheduled or paused -> open, open -> paused, any -> stopped.
    /// InvalidArgument for an unknown id, reopening a stopped sale, or pausing one not open;
    /// Conflict if another change of the sale landed between the read and the update.
    [[nodiscard]] Result<Sale> setStatus(qint64 id, SaleStatus status);
    /// Switches book-only mode (reserves skip the gate). InvalidArgument for an unknown id.
    [[nodiscard]] Result<Sale> setBookOnly(qint64 id, bool on);
    /// One sale; InvalidArgument naming `sale` if unknown.
    [[nodiscard]] Result<Sale> get(qint64 id);
    /// Every sale, newest first.
    [[nodiscard]] Result<QList<Sale>> list();
    /// The SKU's latest sale, which governs its reserves, or nullopt if it never had one.
    [[nodiscard]] Result<std::optional<Sale>> latestFor(const QString &sku);
    /// Units `user` holds or bought of `sku` (PENDING and PAID orders), for per-user limits
    /// when reserves bypass the gate.
    [[nodiscard]] Result<qint64> userUnits(const QString &sku, const QString &user);
    /// One order's units of a SKU and its user.
    struct OrderUnits {
        QString user;
        qint64 units = 0;
    };
    /// Every PENDING or PAID order with units of `sku` and a named user, by order id: the
    /// per-user counts of a gate rebuilt from the book.
    [[nodiscard]] Result<QHash<QString, OrderUnits>> unitsByOrder(const QString &sku);

private:
    Database &m_db;
};

} // namespace flashstock
