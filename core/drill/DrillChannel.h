#pragma once

#include "Outcome.h"
#include "Result.h"

#include <QString>

#include <functional>
#include <memory>

namespace flashstock {

/// A payment callback's answer. `resent`: an earlier send of this same callback got no
/// answer (the server was killed) and it was sent again; then `duplicate` does not tell
/// whether this callback's own first send paid the order (its answer lost) or another
/// delivery of the same payment did: the drill resolves that from the other answers.
struct PaymentAnswer {
    Outcome outcome = Outcome::Duplicate;
    bool resent = false;

    /// The outcome when this was the payment's only delivery: a resend answered
    /// `duplicate` found the order paid by its own first send, so `paid`.
    Outcome ofOnlyDelivery() const { return resent && outcome == Outcome::Duplicate ? Outcome::Paid : outcome; }
};

/// Where a drill's buyers and payment callbacks go: each worker's own engine (the in-process
/// rehearsal), or a running flashstock-server over HTTP (`drill --via`, app/cli). One
/// channel per worker thread, used only from the thread that made it.
class DrillChannel {
public:
    virtual ~DrillChannel() = default;
    /// Reserves `qty` units of `sku` for `order` and `user` with a hold of `holdSeconds`: the
    /// answer's outcome (GateUnavailable included: the worker retries it). Errors: what the
    /// engine or the server said (a server that stays unreachable is Unavailable).
    [[nodiscard]] virtual Result<Outcome> reserve(const QString &order, const QString &user, const QString &sku,
                                                  qint64 qty, qint64 holdSeconds) = 0;
    /// The payment callback of `order` with reference `payment`: paid, duplicate or
    /// refund_required, and whether it was sent again. Errors as reserve's.
    [[nodiscard]] virtual Result<PaymentAnswer> confirm(const QString &order, const QString &payment) = 0;
    /// Engine warnings taken since the last call (gate trouble left for the reconciler); a
    /// server keeps its own, so 0 there.
    virtual qsizetype takeWarnings() { return 0; }
};

/// Makes one channel (called once per worker thread, on that thread, and by the controller
/// for the late payments). Errors: the channel cannot be set up.
using DrillChannelFactory = std::function<Result<std::unique_ptr<DrillChannel>>()>;

enum class FaultKind;

/// A fault acted out on a formation: when it took effect and what was done.
struct FormationAct {
    qint64 atMs = 0; ///< wall clock, ms since the epoch (what the formation's command printed as killed_at_ms)
    QString detail;  ///< for people (the command's answer)
};

/// What `drill --via` needs besides its channels: checks before the sale, and the
/// server-kill and formation faults. All called on the drill's controller thread.
struct DrillVia {
    QString url;                  ///< the server's base URL, for the report
    DrillChannelFactory channels; ///< one per worker (and one for the late payments)
    /// After the drill created its SKU and before any buyer: that the server answers, takes
    /// the token and serves this drill's book and gate (it knows the SKU and sees the same
    /// gate). An error stops the drill before the sale (a broken setup).
    std::function<Result<void>(const QString &sku)> checkServer;
    /// server-kill: kills the server with SIGKILL, calls `whileDown` once the killed process
    /// is gone (before a new one is started), has it started again and returns once it is
    /// ready (what was done, for the report). Empty: server-kill is left out.
    std::function<Result<QString>(const std::function<void()> &whileDown)> killServer;
    /// A formation's faults (`drill --formation FILE`): makes the formation whole again
    /// (healFormation), then acts out `kind` (book-failover, standby-loss, server-kill) and
    /// returns once it took effect; the formation recovers by itself. Empty: book-failover and
    /// standby-loss are left out, and server-kill needs killServer.
    std::function<Result<FormationAct>(FaultKind kind)> formationFault;
    /// Makes the formation whole again (every node and server it lost back); what was done.
    /// Empty with formationFault.
    std::function<Result<QString>()> healFormation;
};

} // namespace flashstock
