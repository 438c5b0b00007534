#pragma once

#include "Result.h"
#include "drill/DrillOptions.h"
#include "drill/DrillReport.h"
#include "drill/DrillSchedule.h"

namespace flashstock {

class Engine;

/// I5 as the drill judges it once quiet: the gate's available equals the book's.
struct GateAgreement {
    bool holds = true;
    qint64 gateAvailable = -1; ///< units; -1 if the stock key is absent or the gate unreachable
    QString detail;            ///< why not, for people (`I5: gate available 7, book available 10 ...`)
};

/// Compares the gate's and the book's available of `sku` (the engine has a gate). Blocking;
/// the engine's thread.
GateAgreement checkGateAgreesWithBook(Engine &engine, const QString &sku);

/// The rule that a rehearsal never disturbs a live sale (DESIGN.md, drill line), for the CLI
/// and the console alike: InvalidArgument naming `db` (a sale of the engine's book is open or
/// paused) or `redis` (the engine's gate has an open sale, of any book), naming the sale, and
/// what to do instead. Drill::run applies it before it creates anything. Blocking; the
/// engine's thread. Errors reading the book or the gate are returned as they are.
[[nodiscard]] Result<void> checkDrillTarget(Engine &engine);

/// The rehearsal drill (DESIGN.md, drill line): M buyers, one unit each, race for N
/// units through the real gate and book from C worker threads, each with its own Engine;
/// a share pays, the rest abandon and their holds expire; faults fire on a schedule fixed
/// by the seed. Then: every due hold expires, late payments arrive, the reconciler runs to
/// quiescence, and I1-I6 are checked against the book and the gate themselves.
///
/// How each fault is injected and when it counts as healed:
/// - crash-after-gate: Gate::reserve is called and the book never is (the state a worker
///   killed between the two leaves). Healed: after reconciliation the token is no longer
///   open in the gate and the order has no RESERVE in the book (absent or abandoned).
/// - lost-callback: a paying buyer's payment is dropped. Healed: the order ended CLOSED.
/// - duplicate-callback: the payment is delivered 2-3 times, the extra copies by other
///   workers at the same time. Healed: one `paid`, the order PAID with exactly one CONFIRM
///   ledger row, no refund.
/// - late-payment: the buyer pays only after every hold was closed. Healed: the answer was
///   `refund_required` and the order has exactly one refund record.
/// - redis-restart: the embedded server is stopped and started (external, also every node of
///   a cluster: only our own connections are killed). Healed: the gate answered a reserve sent after it, and I5 holds.
/// - node-failover (a Redis Cluster gate only): the master that serves the drill's SKU is
///   stopped (SIGSTOP; it must run on this machine) while the buyers go on, until the
///   cluster promotes its replica; then it runs again and rejoins as a replica
///   (DrillGateFaults::failOver). Reserves lost with it are healed by the reconciler from
///   the book. Healed: the gate answered a reserve sent after the promotion, and I5 holds.
/// - script-flush: SCRIPT FLUSH (on every master of a cluster). Healed: the gate answered a reserve sent after it (the
///   scripts were reloaded).
/// - db-error: the buyer's part of the book writers' batch that carries its reserve fails
///   (WriteFaults::failOrder) and rolls back alone, its neighbours commit; the engine gives
///   the gate units back. Healed: the order is not in the book and no gate token of it is
///   open after reconciliation.
///
/// The workers' book work (reserve, confirm, release) goes to DrillOptions::bookWriters book
/// writers (group commit), as a server's does.
///
/// run() blocks; call it from one thread. The progress callback runs on that thread.
class Drill {
public:
    explicit Drill(DrillOptions options);

    /// Runs the drill. Errors (the drill could not run: bad options, the SKU exists, a server
    /// unreachable at the start, the reconciler failed) are Results; a drill that ran but
    /// found broken invariants returns its report with passed() false.
    [[nodiscard]] Result<DrillReport> run();

    /// The schedule run() will use (the same for the same options and seed).
    const DrillSchedule &schedule() const { return m_schedule; }

private:
    DrillOptions m_options;
    DrillSchedule m_schedule;
};

} // namespace flashstock
