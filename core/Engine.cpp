#include "Engine.h"

#include "store/Database.h"

namespace flashstock {

Result<std::unique_ptr<Engine>> Engine::open(const EngineOptions &options)
{
    auto db = Database::open(options.db);
    if (!db)
        return std::unexpected(db.error());
    std::unique_ptr<Engine> engine(new Engine);
    engine->m_db = std::move(*db);
    engine->m_book = std::make_unique<Book>(*engine->m_db, options.actor);
    return engine;
}

Engine::~Engine() = default;

Result<Adjustment> Engine::addSku(const QString &sku, qint64 stock, int buckets)
{
    return m_book->addSku(sku, stock, buckets);
}

Result<Adjustment> Engine::restock(const QString &sku, qint64 qty, const QString &reason)
{
    return m_book->restock(sku, qty, reason);
}

Result<ReserveResult> Engine::reserve(const QString &order, const QString &user, const QList<OrderLine> &lines,
                                      std::optional<qint64> holdSeconds)
{
    return m_book->reserve(order, user, lines, holdSeconds.value_or(kDefaultHoldSeconds));
}

Result<OrderChange> Engine::confirm(const QString &order, const QString &paymentRef)
{
    return m_book->confirm(order, paymentRef);
}

Result<OrderChange> Engine::release(const QString &order, const QString &reason)
{
    return m_book->release(order, reason);
}

Result<QList<OrderChange>> Engine::expire(std::optional<qint64> nowMs)
{
    return m_book->expire(nowMs);
}

} // namespace flashstock
