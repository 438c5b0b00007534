#pragma once

#include "Domain.h"
#include "Result.h"

#include <QString>

#include <functional>

#include <optional>

namespace flashstock {

class Book;
class Gate;
class SaleStore;

/// Puts the book's view of a SKU into the gate: the one way the gate is refilled or rebuilt
/// from the book of record (DESIGN.md: the gate is always rebuildable). Used by the engine
/// (a SKU's first load, a gate that lost its data, book-only mode switched off, `gate
/// rebuild`), and by the reconciler (a healed gate, the decision on a discrepancy).
///
/// The order never lets through a reserve the book would refuse: a pending discrepancy's
/// pause, then the latest sale (open, window, per-user limit) and its users' units, then the
/// stock, net of the tokens the book did not count (read together with the book's figure),
/// so no unit is counted twice, whatever reserves, confirms and releases run meanwhile.
///
/// Uses the engine's gate, book and sale store (not owned); thread affinity: theirs.
class GateRestore {
public:
    GateRestore(Gate &gate, Book &book, SaleStore &sales);

    /// Loads the SKU's gate from the book, the stock only if its key is absent (a first load,
    /// or Redis lost its data: no reserve gets past the gate meanwhile). Returns gate
    /// available. Errors: the gate's or the book's.
    [[nodiscard]] Result<qint64> restoreIfAbsent(const QString &sku);
    /// restoreIfAbsent() by one engine at a time: a crowd that finds the stock key missing
    /// at once restores it once (`fs:{sku}:restoring` claim) while the others wait for the
    /// key, up to 5 s, then restore themselves (only if absent: harmless). Returns the
    /// available this call loaded, or nullopt if another one restored the gate.
    [[nodiscard]] Result<std::optional<qint64>> restoreOnce(const QString &sku);
    /// Replaces the SKU's gate with the book's view. The SKU's reserves answer `paused`
    /// meanwhile; a reserve already past the gate is counted once, in the book or as its
    /// token. The pause is lifted after unless the book pauses the SKU. Returns gate available.
    [[nodiscard]] Result<qint64> rebuild(const QString &sku);
    /// After a decision on a discrepancy of `sku`: once the book no longer pauses the SKU,
    /// rebuild() (which lifts the gate's pause); while another one waits, nothing.
    [[nodiscard]] Result<void> afterDecision(const QString &sku);

    /// Pushes `sale` (open, window, per-user limit) to the gate, and refills the SKU's stock
    /// key from the book if it is absent. Returns the available refilled, nullopt if the
    /// key was there.
    [[nodiscard]] Result<std::optional<qint64>> pushSale(const Sale &sale);

    /// The points of a restore's stock load where a test may stop it.
    enum class RestoreStep {
        TokensRead, ///< the open tokens are read, the book not yet
        BookRead,   ///< the book is read (Book::restoreView), the load not sent yet
    };
    /// TEST SEAM (nothing in the product sets one): called at each RestoreStep on the
    /// restoring thread, so a test can run another actor's steps there. Empty: none.
    void setStepSeam(std::function<void(RestoreStep)> seam) { m_stepSeam = std::move(seam); }

private:
    enum class StockLoad {
        IfAbsent, ///< only if the stock key is absent
        Replace,  ///< unconditionally, under a pause (rebuild)
    };
    Result<qint64> restore(const QString &sku, StockLoad load);
    /// Sets the gate's per-user counts of `sku` to the book's (PENDING and PAID orders) plus
    /// the users' held tokens, when its latest sale has a per-user limit; else does nothing.
    /// Call it while no reserve can pass the gate.
    Result<void> syncUsers(const QString &sku);
    /// The book's pause of `sku` (a pending discrepancy), read straight from the book.
    Result<bool> pausedInBook(const QString &sku);

    Gate &m_gate;
    Book &m_book;
    SaleStore &m_sales;
    std::function<void(RestoreStep)> m_stepSeam; ///< setStepSeam()
};

} // namespace flashstock
