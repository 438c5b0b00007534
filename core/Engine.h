#pragma once

#include "Domain.h"
#include "EngineWarning.h"
#include "Expiry.h"
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
class UnknownOutcomes;

/// How to open an Engine.
struct EngineOptions {
    DbUrl db;                        ///< the book of record
    std::optional<RedisUrl> redis;   ///< the gate; nullopt (or a `none` URL) = book-only
    Actor actor;                     ///< who acts where a call names no one: written on orders, ledger rows, refunds
};

/// What `gateLevels()` found for a SKU.
struct GateSide {
    bool configured = false;  ///< a gate is in front of the book
    bool reachable = false;
    qint64 available = -1;    ///< units; -1 if the stock key is absent
    std::optional<GateCounts> counts; ///< the SKU's counters (calls); nullopt if unreadable
    QString error;            ///< why unreachable, or why the counters are unreadable
};

/// What one pass of a scheduled expirer did (Engine::expireAsExpirer).
struct ExpirerPass {
    QList<OrderChange> released; ///< the orders released, as Engine::expire returns them
    QString heartbeatProblem;    ///< not empty: the heartbeat was not written, and why
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

/// A reserve checked for bad input (Engine::checkReserve): what a caller can build without
/// the book or the gate, e.g. on a server's request thread. A plain value; any thread.
struct ReserveRequest {
    QString order;
    QString user;                      ///< empty: anonymous (bad input for a SKU on sale)
    QList<OrderLine> lines;            ///< normalized: merged by SKU and sorted, the lock order
    std::optional<qint64> holdSeconds; ///< the hold asked for SKUs without a sale, seconds
    /// Who reserves (ReserveOrder::actor); without a name (the default): the engine's
    /// (EngineOptions::actor).
    Actor actor{};
};

/// One reserve on its way through the engine's phases (DESIGN.md, flows: reserve), so that
/// the sequential Engine::reserve and a server that pipelines the gate step of many
/// reserves follow one set of rules:
///  1. Engine::checkReserve: bad input (pure);
///  2. Engine::planReserve: the sale rules (the SKUs' sales, the hold, book-only or not);
///  3. Engine::passGate: the gate's pre-deducts of many attempts in one pipeline, each
///     reply judged in order (refusals give back the tokens the attempt created);
///  4. Engine::finishReserve: what the gate left open (a missing stock key restored, an
///     existing token checked against the book), the book's transaction, the give-back of
///     this attempt's tokens when the book refuses or fails, the book's refusals counted,
///     and the settle of the tokens after the commit.
/// Each phase may decide the answer; later phases then do nothing. A plain value that moves
/// between threads with the phases; each phase runs on the thread of the Engine that runs it.
struct ReserveAttempt {
    ReserveRequest request;
    qint64 holdSeconds = kDefaultHoldSeconds; ///< the hold that applies: the sales' shortest, else asked or default
    QHash<QString, Sale> sales;  ///< the sales of its SKUs, as planReserve saw them
    bool bookOnly = false;       ///< straight to the guarded book (no gate, or a sale switched to book-only)
    QList<OrderLine> lines;      ///< the request's lines with the tokens the gate gave
    QList<OrderLine> created;    ///< tokens this attempt issued: the only ones it may give back
    /// Lines whose gate answer finishReserve completes (no stock key, a token past held),
    /// with that answer.
    QList<std::pair<int, GateReservation>> toResolve;
    std::optional<Result<ReserveResult>> answer; ///< set once decided: the later phases do nothing

    /// The SKU the attempt's book transaction locks first (its first line, in lock order).
    const QString &firstSku() const { return request.lines.constFirst().sku; }
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
/// Unavailable (the book is down or refused the write), Conflict (kept losing races),
/// OutcomeUnknown (the book's COMMIT was lost and a replay could not tell: the tokens stay
/// held, for recordUnknownOutcomes() or the reconciler), Internal.
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
    /// How this engine refills the gate from the book, or nullptr when book-only (tests set
    /// its step seam).
    GateRestore *gateRestore() { return m_restore.get(); }
    /// Puts the gate at `url` in front of the book (once the book is known to open); a
    /// `none` URL leaves the engine book-only.
    void attachGate(const RedisUrl &url);

    /// See Book::addSku; also loads the gate.
    [[nodiscard]] Result<Adjustment> addSku(const QString &sku, qint64 stock, int buckets = 1);
    /// See Book::restock; also raises the gate by the same units.
    [[nodiscard]] Result<Adjustment> restock(const QString &sku, qint64 qty, const QString &reason = {});
    /// Reserves all lines for `order` or none. The hold is the sale's (default 900 s);
    /// `holdSeconds` overrides it for SKUs without a sale (tests, drills).
    [[nodiscard]] Result<ReserveResult> reserve(const QString &order, const QString &user,
                                                const QList<OrderLine> &lines,
                                                std::optional<qint64> holdSeconds = std::nullopt);
    /// Phase 1 of a reserve (ReserveAttempt): validates the order id, the user, the lines
    /// (Book::normalizeLines) and the hold. InvalidArgument naming the field. Pure; any thread.
    [[nodiscard]] static Result<ReserveRequest> checkReserve(const QString &order, const QString &user,
                                                            const QList<OrderLine> &lines,
                                                            std::optional<qint64> holdSeconds = std::nullopt);
    /// Phase 2: the sale rules of `request`'s SKUs (read through a one-second cache): the
    /// hold, whether a user is required, whether the reserve skips the gate. A failure is
    /// the attempt's answer.
    ReserveAttempt planReserve(ReserveRequest request);
    /// Phase 3: the gate's pre-deducts of every line of every attempt not yet decided and
    /// not book-only: one pipelined round trip per SKU (Gate::reserveBatch), the SKUs one
    /// after the other; each attempt's replies are judged in line order (a refusal or gate
    /// trouble decides it, giving back the tokens it created).
    void passGate(const QList<ReserveAttempt *> &attempts);
    /// Phase 4: completes an attempt (see ReserveAttempt) and returns its answer; an attempt
    /// decided before returns that answer and does nothing. prepareBook(), the book's
    /// transaction (through the book writers if set), then applyBook().
    [[nodiscard]] Result<ReserveResult> finishReserve(ReserveAttempt &attempt);
    /// Phase 4a: what the gate left open (a missing stock key restored, an existing token
    /// checked), the book's sale status and pause; then the order the book must reserve
    /// (with its per-user limits when the gate is not in front), or nullopt once decided.
    /// A caller that runs the book itself (a server's book writers) calls applyBook() with
    /// the book's answer, on this Engine's thread.
    std::optional<ReserveOrder> prepareBook(ReserveAttempt &attempt);
    /// Phase 4b: the book's answer to prepareBook()'s order becomes the attempt's answer: a
    /// refusal or failure gives back the tokens the attempt created (never on OutcomeUnknown:
    /// they are recorded (recordUnknownOutcomes) or left to the reconciler), a reserve settles
    /// them.
    void applyBook(ReserveAttempt &attempt, Result<ReserveResult> booked);
    /// One attempt and the book's answer to it (applyBooks).
    struct BookedAttempt {
        ReserveAttempt *attempt; ///< not owned
        Result<ReserveResult> booked;
    };
    /// Phase 4b for many attempts at once (a server's gate dispatcher with the book's answers
    /// that came back together): each as applyBook(), in order, and the settles of every
    /// reserved attempt's tokens in one pipelined round trip (Gate::settlePipeline). The caller
    /// answers once it returns: by then every settle and give-back has been tried.
    void applyBooks(const QList<BookedAttempt> &booked);

    /// Sends this engine's book work (the book's part of reserve, confirm and release) to
    /// `writers` (group commit with other engines' work; this engine's thread waits for the
    /// answer) instead of its own connection; nullptr: its own again. Not owned; it must
    /// outlive its use.
    void useBookWriters(BookWriters *writers) { m_writers = writers; }
    /// Keeps the tokens of every reserve whose book outcome stays unknown (applyBooks) in
    /// `record`, so that the process resolves them itself (Reconciler::resolveTokens);
    /// nullptr: they wait for a reconcile pass. Not owned; it must outlive its use.
    void recordUnknownOutcomes(UnknownOutcomes *record) { m_unknown = record; }

    /// See Book::confirm; a paid order's tokens are marked sold in the gate. As the engine's
    /// actor (EngineOptions::actor).
    [[nodiscard]] Result<OrderChange> confirm(const QString &order, const QString &paymentRef);
    /// The same by `by` (FinishOrder::actor: an order it does not reach is NotFound, as an
    /// unknown order, and nothing moves).
    [[nodiscard]] Result<OrderChange> confirm(const QString &order, const QString &paymentRef, const Actor &by);
    /// See Book::release; the order's tokens give their units back to the gate. As the
    /// engine's actor.
    [[nodiscard]] Result<OrderChange> release(const QString &order, const QString &reason);
    /// The same by `by` (as confirm()).
    [[nodiscard]] Result<OrderChange> release(const QString &order, const QString &reason, const Actor &by);
    /// See Book::expire; each released order's tokens give their units back to the gate as
    /// it is released, then those an earlier run (or a release) released in the book but
    /// could not give back (Book::gateReleasesDue).
    [[nodiscard]] Result<QList<OrderChange>> expire(std::optional<qint64> nowMs = std::nullopt);
    /// One pass of a scheduled expirer (`expire --every`, the console, the server): expire(),
    /// then the heartbeat of this process as `who` in the book (ExpiryStore::beat), so
    /// expiryStatus() shows that something is releasing holds. Errors are expire()'s; a
    /// heartbeat that could not be written is reported in the value (the holds were released).
    [[nodiscard]] Result<ExpirerPass> expireAsExpirer(const ExpirerId &who);
    /// Holds past their expiry by SKU and the expirers' heartbeats (ExpiryStore::status).
    [[nodiscard]] Result<ExpiryStatus> expiryStatus();

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
    /// units, then stock (net of the tokens the book did not count). The SKU's reserves
    /// answer `paused` meanwhile. Returns gate available. InvalidArgument naming `redis` when
    /// book-only.
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
    /// How a gate reply to one line leaves the attempt.
    enum class LineStep {
        Taken,   ///< the line holds its token
        Resolve, ///< queued in toResolve: finishReserve completes it (no stock key, a token past held)
        Decided, ///< the attempt's answer is set (a refusal, gate trouble, an error)
    };
    /// Records a token the gate issued for line `index` as the attempt's own.
    static void recordIssued(ReserveAttempt &attempt, int index, const Result<GateReservation> &reply);
    LineStep judgeGateReply(ReserveAttempt &attempt, int index, const Result<GateReservation> &reply);
    /// Refuses the attempt with `outcome` for `sku`, giving back the tokens it created.
    void refuseAttempt(ReserveAttempt &attempt, Outcome outcome, const QString &sku);
    /// Fails the attempt with `error`, giving back the tokens it created.
    void failAttempt(ReserveAttempt &attempt, const Error &error);
    /// finishReserve's first step: the lines passGate left to resolve. False if that decided.
    bool resolveGate(ReserveAttempt &attempt);
    /// A line whose stock key was missing: the SKU's gate restored from the book (once per
    /// crowd, with a GateRestored warning), then the reserve once more.
    Result<GateReservation> restoreAndReserve(const QString &order, const QString &user, const OrderLine &line);
    /// An existing token is usable if held, or if the book knows its order; else
    /// InvalidArgument (another book's token: no retry changes that).
    Result<void> checkExistingToken(const QString &order, const GateReservation &g);
    /// Book-only: the answer if a pending discrepancy pauses a SKU or a sale is not selling.
    std::optional<Result<ReserveResult>> refusedWithoutGate(const ReserveAttempt &attempt);
    /// The book's part of a reserve: through the book writers if set, else on this engine's book.
    Result<ReserveResult> bookReserve(ReserveOrder order);
    /// The sale_closed answer if a line's sale is not open in the book (counted in the gate).
    std::optional<ReserveResult> closedInBook(const QString &order, const QList<OrderLine> &lines,
                                              const QHash<QString, Sale> &sales);
    /// After the book reserved: gives back the tokens this attempt created that the book did
    /// not store; returns the lines whose tokens the book stored (to settle).
    QList<OrderLine> releaseExtra(const ReserveResult &booked, const QList<OrderLine> &created);
    /// Settles the tokens of `lines` (orders the book committed) in one pipelined round trip;
    /// a token the gate did not settle is a TokenNotSettled warning (the reconciler settles it).
    void settleBooked(const QList<OrderLine> &lines);
    /// Pushes `sale` to the gate (GateRestore::pushSale), with a GateRestored warning if its
    /// stock key was missing and refilled.
    Result<void> pushSaleToGate(const Sale &sale);
    /// GateRestore::restoreIfAbsent for a stock key found missing, with a GateRestored warning.
    Result<qint64> refillMissingStock(const QString &sku);
    /// The GateRestored warning: the gate of `sku` was refilled from the book, `available` units.
    void warnRefilled(const QString &sku, qint64 available);
    /// Gives the lines' tokens back to the gate; true if the gate holds none of them now.
    bool releaseTokens(const QList<OrderLine> &lines, const QString &why);
    /// releaseTokens of a released order, recorded in the book once the gate took them.
    void giveBackReleased(const OrderChange &change, const QString &why);
    void warn(WarningKind kind, const QString &sku, const QString &message);

    std::unique_ptr<Database> m_db;
    std::unique_ptr<Book> m_book;
    std::unique_ptr<SaleStore> m_sales;
    std::unique_ptr<Gate> m_gate;
    std::unique_ptr<GateRestore> m_restore; ///< set with m_gate
    BookWriters *m_writers = nullptr;       ///< useBookWriters(); not owned
    UnknownOutcomes *m_unknown = nullptr;   ///< recordUnknownOutcomes(); not owned
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
