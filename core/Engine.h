#pragma once

#include "Domain.h"
#include "EngineWarning.h"
#include "Result.h"
#include "gate/Gate.h"
#include "gate/RedisUrl.h"
#include "store/Book.h"
#include "store/DbUrl.h"

#include <QElapsedTimer>
#include <QHash>
#include <QStringList>

#include <memory>
#include <optional>

namespace flashstock {

class BookWriters;
class Database;
class Gate;
class GateRestore;
class SaleStore;

/// How to open an Engine.
struct EngineOptions {
    DbUrl db;                        ///< the book of record
    std::optional<RedisUrl> redis;   ///< the gate; nullopt (or a `none` URL) = book-only
    Actor actor;                     ///< operator and source written on ledger rows
};

/// What `gateLevels()` found for a SKU.
struct GateSide {
    bool configured = false;  ///< a gate is in front of the book
    bool reachable = false;
    qint64 available = -1;    ///< units; -1 if the stock key is absent
    std::optional<GateCounts> counts; ///< the SKU's counters (calls); nullopt if unreadable
    QString error;            ///< why unreachable, or why the counters are unreadable
};

/// Why a sale of a SKU may not open now: the launch pre-flight's rules (Engine::launchBlockers).
struct LaunchBlocker {
    enum class Kind {
        LiveSale,           ///< another sale of the SKU is open, paused or scheduled (one at a time)
        PendingDiscrepancy, ///< a discrepancy of the SKU waits for approval: its book is disputed
    };
    Kind kind = Kind::LiveSale;
    qint64 id = 0;    ///< the sale's or the discrepancy's id
    QString message;  ///< for people, naming the sale or discrepancy and what to do
};

/// The engine API the CLI, the console and the drill call: the book of record, with the
/// Redis gate in front when one is configured (DESIGN.md, flows).
///
/// reserve = gate pre-deduct (Lua, atomic), then the book's guarded transaction, then the
/// gate settles the token; a book refusal or failure gives the gate back the units of the
/// tokens this call created before answering. A gate that cannot be reached answers
/// `gate_unavailable` (fail closed) unless the SKU's sale is switched to book-only.
/// Stock changes (add, restock) keep the gate in step; confirm and release tell the gate
/// through the tokens. Gate trouble after the book has committed never fails the call: it
/// is left for the reconciler and reported through takeWarnings() (bounded: the newest
/// kMaxWarnings are kept between two takes).
///
/// Thread affinity: one Engine per thread (it owns a database connection and a Redis
/// context). Results carry the business Outcome; Errors are InvalidArgument (bad input),
/// Unavailable (the book is down), Conflict (kept losing races), Internal.
class Engine {
public:
    /// Warnings kept between two takeWarnings(); older ones are dropped and counted.
    static constexpr qsizetype kMaxWarnings = 256;

    /// Opens the book (applying migrations); the gate connects on first use.
    [[nodiscard]] static Result<std::unique_ptr<Engine>> open(const EngineOptions &options);
    ~Engine();

    Book &book() { return *m_book; }
    Database &database() { return *m_db; }
    SaleStore &sales() { return *m_sales; }
    /// The gate, or nullptr when book-only.
    Gate *gate() { return m_gate.get(); }
    /// Puts the gate at `url` in front of the book (once the book is known to open); a
    /// `none` URL leaves the engine book-only.
    void attachGate(const RedisUrl &url);

    /// Sends this engine's book work (the book's part of reserve, confirm and release) to
    /// `writers` (group commit with other engines' work; this engine's thread waits for the
    /// answer) instead of its own connection; nullptr: its own again. Not owned; it must
    /// outlive its use.
    void useBookWriters(BookWriters *writers) { m_writers = writers; }

    /// See Book::addSku; also loads the gate.
    [[nodiscard]] Result<Adjustment> addSku(const QString &sku, qint64 stock, int buckets = 1);
    /// See Book::restock; also raises the gate by the same units.
    [[nodiscard]] Result<Adjustment> restock(const QString &sku, qint64 qty, const QString &reason = {});
    /// Reserves all lines for `order` or none. The hold is the sale's (default 900 s);
    /// `holdSeconds` overrides it for SKUs without a sale (tests, drills).
    [[nodiscard]] Result<ReserveResult> reserve(const QString &order, const QString &user,
                                                const QList<OrderLine> &lines,
                                                std::optional<qint64> holdSeconds = std::nullopt);
    /// See Book::confirm; a paid order's tokens are marked sold in the gate.
    [[nodiscard]] Result<OrderChange> confirm(const QString &order, const QString &paymentRef);
    /// See Book::release; the order's tokens give their units back to the gate.
    [[nodiscard]] Result<OrderChange> release(const QString &order, const QString &reason);
    /// See Book::expire; each released order's tokens give their units back to the gate.
    [[nodiscard]] Result<QList<OrderChange>> expire(std::optional<qint64> nowMs = std::nullopt);

    /// Creates a sale of the SKU (scheduled: the gate answers sale_closed until started).
    [[nodiscard]] Result<Sale> createSale(const QString &sku, qint64 startMs, qint64 endMs, qint64 holdSeconds,
                                          qint64 perUserLimit);
    /// Opens (start, also resuming a paused sale) or closes (pause, stop) a sale, book and gate.
    /// Idempotent. Opening applies the launch rules first: InvalidArgument (field `sale`)
    /// naming the first of launchBlockers(), and nothing changes.
    [[nodiscard]] Result<Sale> setSaleStatus(qint64 saleId, SaleStatus status);
    /// Switches a sale to book-only (reserves skip the gate) or back; back rebuilds the gate.
    [[nodiscard]] Result<Sale> setSaleBookOnly(qint64 saleId, bool on);
    /// Reloads the SKU's gate from the book (GateRestore::rebuild): pause, sale, per-user
    /// units, then stock (net of tokens still held). The SKU's reserves answer `paused`
    /// meanwhile (up to 2 s more while reserves already past the gate settle). Returns gate
    /// available. InvalidArgument naming `redis` when book-only.
    [[nodiscard]] Result<qint64> rebuildGate(const QString &sku);
    /// After a decision on a discrepancy of `sku` (committed in the book): the SKU's gate
    /// follows the book (GateRestore::afterDecision). Gate trouble is a GateNotRebuilt
    /// warning (takeWarnings), never an error: the book has decided.
    void gateFollowsDecision(const QString &sku);
    /// Pushes the SKU's latest sale as the book holds it now (open, window, per-user limit) to
    /// the gate; nothing without a sale or a gate. The reconciler re-asserts it every pass.
    [[nodiscard]] Result<void> syncGateSale(const QString &sku);
    /// The launch rules, one place for the CLI and the console: what keeps a new sale of `sku`
    /// from opening now (another live sale of it, a discrepancy of it waiting for approval).
    /// `exceptSale`: the sale about to open, which does not block itself. Empty: nothing blocks.
    [[nodiscard]] Result<QList<LaunchBlocker>> launchBlockers(const QString &sku, qint64 exceptSale = 0);
    /// The gate's side of a SKU (never fails: unreachable is reported in the value).
    GateSide gateLevels(const QString &sku);

    /// Gate trouble met after the book committed (left for the reconciler) since the last
    /// take, oldest first, with the count of older ones dropped; starts an empty ring.
    WarningRing takeWarnings();

private:
    Engine() = default;
    Result<std::optional<Sale>> saleOf(const QString &sku);
    /// A pending discrepancy pauses the SKU (book-only reserves; the gate has its own key).
    Result<bool> pausedInBook(const QString &sku);
    Result<ReserveResult> reserveThroughGate(const QString &order, const QString &user, QList<OrderLine> lines,
                                             qint64 holdSeconds, const QHash<QString, Sale> &sales);
    /// The book's part of a reserve: through the book writers if set, else on this engine's book.
    Result<ReserveResult> bookReserve(ReserveOrder order);
    Result<ReserveResult> reserveInBook(const QString &order, const QString &user, const QList<OrderLine> &lines,
                                        qint64 holdSeconds, const QHash<QString, Sale> &sales);
    /// Pushes `sale` to the gate (GateRestore::pushSale), with a GateRestored warning if its
    /// stock key was missing and refilled.
    Result<void> pushSaleToGate(const Sale &sale);
    /// GateRestore::restoreIfAbsent for a stock key found missing, with a GateRestored warning.
    Result<qint64> refillMissingStock(const QString &sku);
    /// The GateRestored warning: the gate of `sku` was refilled from the book, `available` units.
    void warnRefilled(const QString &sku, qint64 available);
    /// Pre-deducts every line in the gate, in order, setting each line's token; `created`
    /// collects the tokens this call issued. A refusal (the answer) or a failure gives those
    /// back first; nullopt: every line holds a token.
    Result<std::optional<ReserveResult>> preDeduct(const QString &order, const QString &user, QList<OrderLine> &lines,
                                                   QList<OrderLine> &created);
    /// One line's pre-deduct; a missing stock key is restored from the book (once per
    /// crowd, with a GateRestored warning) and the reserve tried once more.
    Result<GateReservation> gateReserve(const QString &order, const QString &user, const OrderLine &line);
    /// An existing token is usable if held, or if the book knows its order; else Conflict.
    Result<void> checkExistingToken(const QString &order, const GateReservation &g);
    /// The sale_closed answer if a line's sale is not open in the book (counted in the gate).
    std::optional<ReserveResult> closedInBook(const QString &order, const QList<OrderLine> &lines,
                                              const QHash<QString, Sale> &sales);
    /// After the book reserved: gives back the tokens it did not store, settles the others.
    void settleBooked(const ReserveResult &booked, const QList<OrderLine> &created);
    void releaseTokens(const QList<OrderLine> &lines, const QString &why);
    void warn(WarningKind kind, const QString &sku, const QString &message);

    std::unique_ptr<Database> m_db;
    std::unique_ptr<Book> m_book;
    std::unique_ptr<SaleStore> m_sales;
    std::unique_ptr<Gate> m_gate;
    std::unique_ptr<GateRestore> m_restore; ///< set with m_gate
    BookWriters *m_writers = nullptr;       ///< useBookWriters(); not owned
    WarningRing m_warnings{kMaxWarnings};
    struct CachedSale {
        std::optional<Sale> sale;
        QElapsedTimer age;
    };
    QHash<QString, CachedSale> m_saleCache;
    struct CachedPause {
        bool paused = false;
        QElapsedTimer age;
    };
    QHash<QString, CachedPause> m_pauseCache;
};

} // namespace flashstock
