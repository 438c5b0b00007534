#pragma once

#include "Domain.h"
#include "Result.h"
#include "store/Book.h"
#include "store/DbUrl.h"

#include <memory>
#include <optional>

namespace flashstock {

class Database;

/// How to open an Engine.
struct EngineOptions {
    DbUrl db;           ///< the book of record
    Actor actor;        ///< operator and source written on ledger rows
};

/// The engine API the CLI, the console and the drill call: the book of record, with the
/// gate in front when one is configured. Thread affinity: one Engine per thread (it owns a
/// database connection). Every call returns a business Outcome inside the Result, or an
/// Error (InvalidArgument for bad input, Unavailable when a server is down, Conflict when a
/// transaction kept losing races, Internal when the book is inconsistent).
class Engine {
public:
    /// Opens the book (applying migrations). Errors as Database::open.
    [[nodiscard]] static Result<std::unique_ptr<Engine>> open(const EngineOptions &options);
    ~Engine();

    Book &book() { return *m_book; }
    Database &database() { return *m_db; }

    /// See Book::addSku.
    [[nodiscard]] Result<Adjustment> addSku(const QString &sku, qint64 stock, int buckets = 1);
    /// See Book::restock.
    [[nodiscard]] Result<Adjustment> restock(const QString &sku, qint64 qty, const QString &reason = {});
    /// Reserves all lines for `order` or none; holds for `holdSeconds` (default 900 s).
    [[nodiscard]] Result<ReserveResult> reserve(const QString &order, const QString &user,
                                                const QList<OrderLine> &lines,
                                                std::optional<qint64> holdSeconds = std::nullopt);
    /// See Book::confirm.
    [[nodiscard]] Result<OrderChange> confirm(const QString &order, const QString &paymentRef);
    /// See Book::release.
    [[nodiscard]] Result<OrderChange> release(const QString &order, const QString &reason);
    /// See Book::expire.
    [[nodiscard]] Result<QList<OrderChange>> expire(std::optional<qint64> nowMs = std::nullopt);

private:
    Engine() = default;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<Book> m_book;
};

} // namespace flashstock
