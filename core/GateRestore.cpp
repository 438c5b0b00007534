#include "GateRestore.h"

#include "gate/Gate.h"
#include "store/Book.h"
#include "store/DiscrepancyStore.h"
#include "store/SaleStore.h"

#include <QElapsedTimer>
#include <QScopeGuard>
#include <QThread>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// What the gate enforces of a sale.
GateSale gateSale(const Sale &s)
{
    return GateSale{s.status == SaleStatus::Open, s.startMs, s.endMs, s.perUserLimit};
}

} // namespace

GateRestore::GateRestore(Gate &gate, Book &book, SaleStore &sales)
    : m_gate(gate)
    , m_book(book)
    , m_sales(sales)
{
}

Result<bool> GateRestore::pausedInBook(const QString &sku)
{
    // Straight from the book, not the engine's caches: this runs after the gate lost state.
    return DiscrepancyStore(m_book.database()).isPaused(sku);
}

Result<qint64> GateRestore::restoreIfAbsent(const QString &sku)
{
    return restore(sku, StockLoad::IfAbsent);
}

Result<qint64> GateRestore::rebuild(const QString &sku)
{
    return restore(sku, StockLoad::Replace);
}

Result<void> GateRestore::afterDecision(const QString &sku)
{
    auto paused = pausedInBook(sku);
    if (!paused)
        return std::unexpected(paused.error());
    if (*paused)
        return {};
    if (auto rebuilt = rebuild(sku); !rebuilt)
        return std::unexpected(rebuilt.error());
    return {};
}

Result<qint64> GateRestore::restore(const QString &sku, StockLoad load)
{
    auto paused = pausedInBook(sku);
    if (!paused)
        return std::unexpected(paused.error());
    // A rebuild replaces live figures: reserves pause while it runs, so no token opens
    // meanwhile. Without the stock key (a restore) no reserve gets past the gate.
    const bool replace = load == StockLoad::Replace;
    const bool quiesce = replace && !*paused;
    if (*paused || replace) {
        if (auto r = m_gate.setPaused(sku, true); !r)
            return std::unexpected(r.error());
    }
    auto unpause = qScopeGuard([&] {
        if (!quiesce)
            return;
        // A pause left behind (the gate failed just now) is lifted by the next reconcile
        // pass, which sets every gate's pause to the book's.
        if (auto still = pausedInBook(sku); still && !*still)
            (void)m_gate.setPaused(sku, false);
    });
    auto sale = m_sales.latestFor(sku);
    if (!sale)
        return std::unexpected(sale.error());
    if (*sale) {
        if (auto r = m_gate.setSale(sku, gateSale(**sale)); !r)
            return std::unexpected(r.error());
    }
    if (auto r = syncUsers(sku); !r)
        return std::unexpected(r.error());
    // Unreadable counters are reset, best effort: they are only the console's rates.
    if (!m_gate.counts(sku))
        (void)m_gate.clearCounts(sku);
    // The open tokens first, then the book's available and which of them its live orders
    // hold, at one instant; the load takes off the units of every other token held, settled
    // or sold since the snapshot. A reserve, confirm or release in flight meanwhile moves
    // its units through a token the load sees, so each unit is counted once: in the book's
    // figure or as a token (tests/model: restore.tokens, restore.levels, restore.load).
    qint64 since = -1;
    auto tokens = m_gate.openTokens(sku, &since);
    if (!tokens)
        return std::unexpected(tokens.error());
    if (m_stepSeam)
        m_stepSeam(RestoreStep::TokensRead);
    QStringList ids;
    ids.reserve(tokens->size());
    for (const GateToken &t : std::as_const(*tokens))
        ids << t.token;
    auto view = m_book.restoreView(sku, ids);
    if (!view)
        return std::unexpected(view.error());
    if (m_stepSeam)
        m_stepSeam(RestoreStep::BookRead);
    auto loaded = m_gate.load(sku, view->available, replace, since, view->booked);
    if (!loaded)
        return loaded;
    // A pause the book no longer has (its discrepancy was resolved while the gate was away).
    if (!*paused && !quiesce) {
        auto still = pausedInBook(sku);
        if (still && !*still)
            if (auto r = m_gate.setPaused(sku, false); !r)
                return std::unexpected(r.error());
    }
    return loaded;
}

Result<std::optional<qint64>> GateRestore::restoreOnce(const QString &sku)
{
    // One engine restores, the others wait for the stock key (the restore writes it last),
    // then reserve. A claim whose holder died expires; after the wait an engine restores
    // itself (only-if-absent, so harmless).
    constexpr qint64 kClaimMs = 10000, kWaitMs = 5000, kPollMs = 20;
    auto claimed = m_gate.claimRestore(sku, kClaimMs);
    if (!claimed)
        return std::unexpected(claimed.error());
    if (!*claimed) {
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < kWaitMs) {
            auto available = m_gate.available(sku);
            if (!available)
                return std::unexpected(available.error());
            if (*available >= 0)
                return std::optional<qint64>{};
            QThread::msleep(kPollMs);
        }
    }
    auto restored = restoreIfAbsent(sku);
    if (*claimed) // a claim not given back expires after kClaimMs
        (void)m_gate.endRestore(sku);
    if (!restored)
        return std::unexpected(restored.error());
    return std::optional<qint64>{*restored};
}

Result<void> GateRestore::syncUsers(const QString &sku)
{
    auto sale = m_sales.latestFor(sku);
    if (!sale)
        return std::unexpected(sale.error());
    if (!*sale || (*sale)->perUserLimit <= 0)
        return {}; // the count only serves a per-user limit
    // Held tokens first, then the book: a held token whose order the book has meanwhile
    // committed is counted once, by the book. No new token can appear meanwhile (the caller
    // paused the SKU, or its stock key is absent), so no reserve is missed either.
    auto tokens = m_gate.openTokens(sku);
    if (!tokens)
        return std::unexpected(tokens.error());
    auto orders = m_sales.unitsByOrder(sku);
    if (!orders)
        return std::unexpected(orders.error());
    QHash<QString, qint64> units;
    for (const SaleStore::OrderUnits &o : std::as_const(*orders))
        units[o.user] += o.units;
    for (const GateToken &t : std::as_const(*tokens))
        if (t.state == TokenState::Held && !t.user.isEmpty() && !orders->contains(t.order))
            units[t.user] += t.qty;
    if (auto r = m_gate.setUserUnits(sku, units); !r)
        return std::unexpected(r.error());
    return {};
}

Result<std::optional<qint64>> GateRestore::pushSale(const Sale &sale)
{
    if (auto r = m_gate.setSale(sale.sku, gateSale(sale)); !r)
        return std::unexpected(r.error());
    auto available = m_gate.available(sale.sku);
    if (!available)
        return std::unexpected(available.error());
    if (*available >= 0)
        return std::optional<qint64>{};
    auto loaded = restoreIfAbsent(sale.sku);
    if (!loaded)
        return std::unexpected(loaded.error());
    return std::optional<qint64>{*loaded};
}

} // namespace flashstock
