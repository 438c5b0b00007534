#pragma once

#include "Result.h"
#include "drill/DrillChannel.h"
#include "gate/RedisUrl.h"
#include "store/DbUrl.h"

#include <QList>
#include <QMap>
#include <QSet>
#include <QString>

#include <functional>
#include <optional>

namespace flashstock {

struct ResolvedProfile;

/// The fault kinds a drill can inject (DESIGN.md, drill line of the CLI table).
enum class FaultKind {
    CrashAfterGate,    ///< the gate took the units, the worker "dies" before the book
    LostCallback,      ///< the payment is never delivered: the hold must expire
    DuplicateCallback, ///< the payment is delivered 2-3 times, partly from other workers at once
    LatePayment,       ///< the payment arrives after the hold was closed: a refund must be recorded
    RedisRestart,      ///< the embedded redis-server restarted mid-sale (external: our connections killed)
    ScriptFlush,       ///< SCRIPT FLUSH mid-sale
    DbError,           ///< an order's part of its book batch fails (WriteFaults::failOrder)
    NodeFailover,      ///< a Redis Cluster master stops mid-sale and its replica takes over
    ServerKill,        ///< `drill --via`: the server is killed with SIGKILL mid-sale and started again
    BookFailover,      ///< `drill --formation`: the book's primary is lost (keeper and postmaster SIGKILLed); a standby is promoted
    StandbyLoss,       ///< `drill --formation`: a synchronous standby of the book is lost
};

/// Every kind, in report order.
QList<FaultKind> allFaultKinds();
/// `crash-after-gate`, `lost-callback`, ... (the CLI and JSON name).
QString faultName(FaultKind kind);
/// True for the kinds acted out on a formation (`drill --formation FILE`): book-failover,
/// standby-loss.
bool isFormationFault(FaultKind kind);
/// The kind of a name, or nullopt.
std::optional<FaultKind> faultFromName(const QString &name);
/// True for kinds that act on the whole gate or server (restart, flush, failover, server
/// kill) rather than on one buyer.
bool isGlobalFault(FaultKind kind);
/// Why `kind` cannot be injected into a drill on `gate` (nullopt or `none`: book-only), for
/// people (`it needs a gate, and this drill runs book-only`); empty when it can. Kinds that
/// act on the gate need one; node-failover needs a Redis Cluster (`redis-cluster://`).
QString faultLeftOutReason(FaultKind kind, const std::optional<RedisUrl> &gate);
/// The rate `all` uses for a kind (chance per request).
double defaultFaultRate(FaultKind kind);

/// `all`, `none`, or `NAME[=RATE],...` (RATE a chance per request, 0..1, or `once`; a bare
/// NAME takes its default rate). `all` also sets `forceEach`; `NAME=once` fires that kind
/// exactly once (rate 0, placed as `all` places a kind that drew nothing). InvalidArgument
/// naming `faults`.
struct FaultSpec {
    QMap<FaultKind, double> rates; ///< kinds switched on, with their rate
    bool forceEach = false;        ///< `all`: the schedule fires every kind at least once
    QSet<FaultKind> once;          ///< `NAME=once`: fired exactly once each

    /// The schedule places `kind` once if nothing drew it (`all`, or `NAME=once`).
    bool mustFire(FaultKind kind) const { return forceEach || once.contains(kind); }
};
[[nodiscard]] Result<FaultSpec> parseFaults(const QString &text);

/// Live figures of a running drill (for the progress line). Units are whole units.
struct DrillProgress {
    qint64 answered = 0;      ///< buyers whose reserve was answered
    qint64 buyers = 0;        ///< buyers in total
    qint64 reservedUnits = 0; ///< reserve answers `reserved` so far
    qint64 paidUnits = 0;     ///< confirm answers `paid` so far
    qint64 faults = 0;        ///< faults injected so far
    double ratePerS = 0;      ///< buyers answered per second so far
    double elapsedS = 0;
    QString phase;            ///< sale, expire, late-payments, reconcile, check
};

/// The parameters a person chooses for a drill (the CLI's `drill` and `drill --via`, the
/// console's drill form), with the defaults and ranges every face offers: their one place
/// (DrillOptions::validate checks the ranges). Plain values; any thread.
struct DrillParameters {
    static constexpr qint64 kMaxBuyers = 10'000'000;
    static constexpr int kMaxConcurrency = 256;
    static constexpr qint64 kMaxHoldSeconds = 3600;
    /// The faults (parseFaults text) a person gets without choosing: every kind.
    static QString defaultFaults() { return QStringLiteral("all"); }
    /// A SKU name for a new drill: `drill-` and the UTC time to the millisecond.
    static QString freshSku();

    qint64 stock = 1000;        ///< units, 1..kMaxQuantity (2^31-1)
    qint64 buyers = 20000;      ///< each wants 1 unit, 1..kMaxBuyers
    int concurrency = 8;        ///< worker threads, each with its own Engine, 1..kMaxConcurrency
    double payRatio = 0.7;      ///< share of buyers that pay, 0..1
    qint64 holdSeconds = 2;     ///< hold of each reservation, 1..kMaxHoldSeconds
    quint64 seed = 1;           ///< same seed, same fault schedule
};

/// Everything a drill needs: the parameters, and what the face fills in (where it runs, the
/// faults parsed, callbacks). Validate with validate() (run() calls it first).
struct DrillOptions : DrillParameters {
    QString sku;                ///< created by the drill; must not exist yet
    int bookWriters = 4;        ///< book writers the workers' book work goes to (group commit), 1..64
    FaultSpec faults;           ///< none unless set (parseFaults(defaultFaults()) for what a person gets)
    DbUrl db;                   ///< the book of record
    std::optional<RedisUrl> redis; ///< the gate; nullopt = book-only (no gate faults then)
    QString embeddedDataDir;    ///< set when `redis` is the data dir's private redis-server (restartable)
    QString operatorName = QStringLiteral("drill"); ///< written on ledger rows (source `drill`)
    qint64 reconcileMaxPasses = 10; ///< passes before giving up on quiescence
    /// Polled by the thread that runs the drill (every few ms); may be empty. Once it answers
    /// true no new buyer is served and the drill winds down as after the last buyer (holds
    /// expire, the reconciler runs, the invariants are checked), so book and gate are left
    /// consistent; the report says cancelled and does not pass.
    std::function<bool()> cancelled;
    /// Called every `progressIntervalMs` from the thread that runs the drill; may be empty.
    std::function<void(const DrillProgress &)> progress;
    int progressIntervalMs = 250;
    /// `drill --via`: the buyers and payment callbacks go to a running server through these
    /// channels; the drill still opens `db` and `redis` (the server's book and gate) for its
    /// setup, wind-down and checks. The inside faults (crash-after-gate, db-error) are left
    /// out then; server-kill needs `via->killServer`.
    std::optional<DrillVia> via;
    /// TEST ONLY: every worker's book reserves through NaiveReserve (the broken read-check-write).
    bool naiveBookForTesting = false;

    /// The book, gate and operator of `profile`; the data dir's private redis-server is the
    /// one redis-restart restarts. Call before validate().
    void useProfile(const ResolvedProfile &profile);

    /// Why `kind` cannot be injected into this drill, for people; empty when it can: the
    /// gate's reasons (faultLeftOutReason), the inside faults with `via`, server-kill without
    /// a server it can restart, book-failover and standby-loss without a formation.
    QString leftOutReason(FaultKind kind) const;

    /// InvalidArgument naming the field (sku, stock, buyers, concurrency, pay-ratio,
    /// hold-seconds, faults) if something is out of range.
    [[nodiscard]] Result<void> validate() const;
};

} // namespace flashstock
