#pragma once

#include "Outcome.h"
#include "Result.h"
#include "gate/GateHealth.h"
#include "gate/RedisUrl.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

namespace flashstock {

class SlotMap;

/// State of one token in the gate.
enum class TokenState { Held, Settled, Released, Sold, Unknown };

/// Lower-case name of a token state as the gate stores it ("held", "settled", ...).
QString tokenStateName(TokenState state);

/// What the gate's reserve script answered.
enum class GateCode {
    Reserved,      ///< a new token was issued and `qty` units deducted
    Existing,      ///< the order already holds a token on this SKU: returned, nothing deducted
    OutOfStock,    ///< gate available < qty; nothing changed
    LimitExceeded, ///< the user's units on this SKU would pass the per-user limit; nothing changed
    SaleClosed,    ///< a sale is defined for the SKU and is not open at Redis TIME; nothing changed
    Paused,        ///< the SKU is paused (a discrepancy or a rebuild holds it); nothing changed
    NoStockKey,    ///< the SKU's stock key (field `available` of `fs:{sku}:gate`) is missing (never
                   ///< loaded, flushed, evicted); nothing changed
};

/// One pre-deduct as the gate answered it.
struct GateReservation {
    GateCode code = GateCode::OutOfStock;
    QString token;        ///< set for Reserved and Existing
    qint64 qty = 0;       ///< units the token holds (for Existing: the units of the first reserve)
    TokenState state = TokenState::Unknown; ///< Reserved: Held; Existing: the token's state now
};

/// One line of a pipelined reserve of one SKU (`Gate::reserveBatch`).
struct GateReserveRequest {
    QString order;
    QString user;   ///< may be empty (see Gate::reserve)
    qint64 qty = 0; ///< units, 1..2147483647
};

/// One script call as sent to Redis: `EVALSHA sha1 keys.size() keys... args...`.
struct GateScriptCall {
    QByteArray sha1;         ///< lower-case hex SHA1 of the script body
    QList<QByteArray> keys;  ///< KEYS
    QList<QByteArray> args;  ///< ARGV
};

/// One reserve of a pipeline over any SKUs (`Gate::reservePipeline`).
struct GateReserveLine {
    QString sku;
    QString order;
    QString user;   ///< may be empty (see Gate::reserve)
    qint64 qty = 0; ///< units, 1..2147483647
};

/// One token of one SKU (`Gate::settlePipeline`).
struct GateTokenRef {
    QString sku;
    QString token;
};

/// A token as the gate records it (for the reconciler and `sku show`).
struct GateToken {
    QString token;
    QString order;
    QString user;
    qint64 qty = 0;       ///< units
    qint64 createdMs = 0; ///< Redis TIME at reserve, ms since the epoch
    TokenState state = TokenState::Unknown;
};

/// Sale settings the gate enforces for one SKU (see `sale create`).
struct GateSale {
    bool open = false;
    qint64 startMs = 0;       ///< ms since the epoch; 0 = no start bound
    qint64 endMs = 0;         ///< ms since the epoch; 0 = no end bound
    qint64 perUserLimit = 0;  ///< units per user; 0 = no limit
};

/// The reserve counters of one SKU since its gate keys were created (`n:` fields of `fs:{sku}:gate`):
/// calls, not units. They only grow (a Redis restart without persistence or a flush starts
/// them again at 0), so a rate is the difference of two readings over their interval.
struct GateCounts {
    qint64 reserved = 0; ///< new tokens issued
    // Refusals by reason; the engine adds the book's refusals of reserves the gate let
    // through (Gate::countRefusal).
    qint64 outOfStock = 0;
    qint64 limitExceeded = 0;
    qint64 saleClosed = 0;
    qint64 paused = 0;
    /// Every business refusal (the console's reject rate counts these).
    qint64 refused() const { return outOfStock + limitExceeded + saleClosed + paused; }
};

/// The Redis gate: atomic Lua pre-deducts in front of the book of record.
///
/// Keys of one SKU share its hash tag (`fs:{sku}:...`, see GateKeys), so each script call
/// touches one Redis Cluster slot. On a `redis-cluster://` URL every call goes to the
/// master that owns its SKU's slot (GateRouter: slot map, MOVED, ASK, TRYAGAIN); a node
/// that cannot be reached fails the calls of its SKUs only. Owns one hiredis context per
/// node: a Gate belongs to the thread that uses it (create one per thread). A transport
/// failure drops the context and the next call connects again. Every call that cannot
/// reach Redis within the timeouts (or, in a cluster, meets a slot migration or failover
/// for longer than the command timeout) returns ErrorCode::Unavailable; a server-side
/// script error returns ErrorCode::Internal. Scripts are loaded by SHA on each new
/// connection; on NOSCRIPT they are loaded again and the call is retried once.
class Gate {
public:
    /// Does not connect yet; the first call does.
    explicit Gate(RedisUrl url);
    ~Gate();
    Gate(const Gate &) = delete;
    Gate &operator=(const Gate &) = delete;

    /// Connects now (and loads scripts): the server, or the cluster's slot map and every
    /// master. Unavailable if the server, or no node of the cluster, can be reached.
    [[nodiscard]] Result<void> connect();

    /// Pre-deducts `qty` units of `sku` for `order` (idempotent per order and SKU).
    /// `user` may be empty when the SKU has no sale with a per-user limit.
    /// Business refusals are GateCode values, not errors. Errors: InvalidArgument for a
    /// malformed id or qty, or a missing user when the sale has a per-user limit;
    /// Unavailable; Internal.
    [[nodiscard]] Result<GateReservation> reserve(const QString &sku, const QString &order,
                                                  const QString &user, qint64 qty);
    /// The reserve script call of `line` exactly as reservePipeline sends it: the script's
    /// SHA1 (EVALSHA), KEYS and ARGV. For tools that drive the same script from outside
    /// (`flashstock-cli gate script-keys`, redis-benchmark in scripts/bench-server.sh).
    /// Does not check the line. Plain function of its argument; any thread.
    static GateScriptCall reserveCall(const GateReserveLine &line);
    /// Many reserves of any SKUs in one round trip per Redis node (the server's gate
    /// dispatcher): one pipeline per node, the nodes working at once. Answers one Result
    /// per line, in order, each on its own: a malformed line is InvalidArgument and is not
    /// sent; a node that cannot be reached fails only its lines (Unavailable); a line's
    /// business refusal is its GateCode. Lines of one order are independent here: an
    /// order of several lines is all or nothing only through the Engine.
    [[nodiscard]] QList<Result<GateReservation>> reservePipeline(const QList<GateReserveLine> &lines);
    /// Many reserves of one SKU in one pipelined round trip (bulk work and the benchmark).
    /// Answers in request order; a malformed request fails the whole batch before sending,
    /// and any line's error is the batch's error.
    [[nodiscard]] Result<QList<GateReservation>> reserveBatch(const QString &sku,
                                                              const QList<GateReserveRequest> &requests);
    /// Held -> settled: the book committed the token's order. Idempotent.
    [[nodiscard]] Result<void> settle(const QString &sku, const QString &token);
    /// Settled -> sold: the order was paid. Idempotent.
    [[nodiscard]] Result<void> markSold(const QString &sku, const QString &token);
    /// Held or settled -> released: gives the token's units back to gate available
    /// (and the user's quota). Idempotent: a released or sold token changes nothing.
    /// Returns true if units were given back by this call.
    [[nodiscard]] Result<bool> release(const QString &sku, const QString &token);
    /// Settle many tokens of one SKU in one pipelined round trip; a malformed token fails the
    /// whole batch before sending, and any token's error is the batch's error.
    [[nodiscard]] Result<void> settleBatch(const QString &sku, const QList<QString> &tokens);
    /// Settles tokens of any SKUs in one round trip per Redis node (the server's gate
    /// dispatcher, the winners of one book batch): one Result per token, in order, each as
    /// settle() answers it (a malformed one is InvalidArgument and is not sent; a node that
    /// cannot be reached fails only its tokens).
    [[nodiscard]] QList<Result<void>> settlePipeline(const QList<GateTokenRef> &tokens);

    /// Sets gate available to `bookAvailable` minus the units of the tokens the book did not
    /// count, only if the stock key is absent (`force` false) or unconditionally (`force`
    /// true, used by rebuild under pause). `booked`: the tokens the book's live orders held
    /// when `bookAvailable` was read (Book::restoreView); every other token held, settled or
    /// sold now that was open at or after `sinceMs` (the Redis TIME openTokens() gave before
    /// that book read; -1: none, the open tokens only) comes off (lua/load-3.lua). Returns
    /// the value now in the gate.
    [[nodiscard]] Result<qint64> load(const QString &sku, qint64 bookAvailable, bool force, qint64 sinceMs = -1,
                                      const QStringList &booked = {});
    /// Adds `units` (may be negative) to gate available if the stock key exists; used when the
    /// book restocks or adjusts. Returns false if the key was absent (nothing done).
    [[nodiscard]] Result<bool> adjust(const QString &sku, qint64 units);
    /// Gate available in units, or -1 when the stock key is absent.
    [[nodiscard]] Result<qint64> available(const QString &sku);

    /// The SKU's reserve counters (all 0 before its first reserve).
    [[nodiscard]] Result<GateCounts> counts(const QString &sku);
    /// Tokens of `sku` in state held (pre-deducted, the book not answered yet).
    [[nodiscard]] Result<qint64> heldCount(const QString &sku);
    /// Deletes the SKU's counters (a rebuild resets counters it cannot read).
    [[nodiscard]] Result<void> clearCounts(const QString &sku);
    /// Counts one refusal the gate did not see itself (the book refused after the gate let
    /// the reserve through). `outcome` is OutOfStock, LimitExceeded, SaleClosed or Paused;
    /// anything else is InvalidArgument.
    [[nodiscard]] Result<void> countRefusal(const QString &sku, Outcome outcome);

    /// Defines or updates the sale of `sku`; removing it (`clearSale`) lets the SKU sell normally.
    [[nodiscard]] Result<void> setSale(const QString &sku, const GateSale &sale);
    [[nodiscard]] Result<void> clearSale(const QString &sku);
    /// The SKUs whose sale is open in this gate (any book's), sorted: SCAN over the SKUs'
    /// gate keys (on every master of a cluster), so it costs one pass over the key space (the
    /// drill's safety check, not a hot path).
    [[nodiscard]] Result<QStringList> openSaleSkus();
    /// Replaces the users' units of `sku` (the per-user limit's count) with `units` (user ->
    /// units, >= 1) in one script call (set-users-1.lua); call it while no reserve can pass
    /// the gate (see Engine). Returns how many users now have units. InvalidArgument for a
    /// bad user id or units < 1.
    [[nodiscard]] Result<qint64> setUserUnits(const QString &sku, const QHash<QString, qint64> &units);
    /// Claims the restore of `sku` from the book for `ttlMs` (`fs:{sku}:restoring`, SET NX PX):
    /// true for the one caller that got it, so a crowd that finds the gate empty restores it
    /// once. endRestore() gives the claim back early.
    [[nodiscard]] Result<bool> claimRestore(const QString &sku, qint64 ttlMs);
    [[nodiscard]] Result<void> endRestore(const QString &sku);
    /// Pauses or unpauses reserves of `sku` (reserve answers Paused).
    [[nodiscard]] Result<void> setPaused(const QString &sku, bool paused);

    /// Every token of `sku` in state Held or Settled (the reconciler's view). `nowMs` set:
    /// the Redis TIME of the read, ms since the epoch.
    [[nodiscard]] Result<QList<GateToken>> openTokens(const QString &sku, qint64 *nowMs = nullptr);
    /// Redis TIME in ms since the epoch (the gate's one clock; in a cluster, the first
    /// master's that answers: the nodes' clocks agree as far as NTP keeps them).
    [[nodiscard]] Result<qint64> nowMs();

    /// Per node (the server, or every master and replica of the cluster): PING round trip,
    /// whether every script is in its cache, its role and slots; and all of that summed up.
    /// Never fails: a node that does not answer says so in its entry.
    GateHealth health();

    /// Released and sold tokens are kept this long (seconds, by Redis TIME) and then purged
    /// a few at a time by later release/mark-sold calls: record and order mapping go, so a
    /// reserve of that order afterwards gets a new token. Default 86400 (one day).
    static constexpr int kDefaultTokenRetentionSeconds = 86400;
    /// Changes the retention used by this Gate's release/mark-sold calls (>= 0).
    void setTokenRetentionSeconds(int seconds);
    /// On a `redis-cluster://` URL, calls `listener` on this gate's thread with each slot map
    /// it reads that differs from the one before (the first one included): which master
    /// serves which SKUs (HashSlot::ofSku). Never called for a single server.
    void setSlotMapListener(std::function<void(const SlotMap &)> listener);
    /// The URL this gate talks to.
    const RedisUrl &url() const;
    /// Connections made so far, over all nodes (a reconnect after a dropped context adds one).
    int connectCount() const;

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace flashstock
