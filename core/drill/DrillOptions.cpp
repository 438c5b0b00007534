#include "drill/DrillOptions.h"

#include "Identifiers.h"
#include "open/EngineOpener.h"

#include <QDateTime>
#include <QStringList>

#include <cmath>

using namespace Qt::StringLiterals;

namespace flashstock {

QList<FaultKind> allFaultKinds()
{
    return {FaultKind::CrashAfterGate, FaultKind::LostCallback, FaultKind::DuplicateCallback, FaultKind::LatePayment,
            FaultKind::RedisRestart,   FaultKind::ScriptFlush,  FaultKind::DbError,          FaultKind::NodeFailover,
            FaultKind::ServerKill,     FaultKind::BookFailover, FaultKind::StandbyLoss};
}

QString faultName(FaultKind kind)
{
    switch (kind) {
    case FaultKind::CrashAfterGate: return u"crash-after-gate"_s;
    case FaultKind::LostCallback: return u"lost-callback"_s;
    case FaultKind::DuplicateCallback: return u"duplicate-callback"_s;
    case FaultKind::LatePayment: return u"late-payment"_s;
    case FaultKind::RedisRestart: return u"redis-restart"_s;
    case FaultKind::ScriptFlush: return u"script-flush"_s;
    case FaultKind::DbError: return u"db-error"_s;
    case FaultKind::NodeFailover: return u"node-failover"_s;
    case FaultKind::ServerKill: return u"server-kill"_s;
    case FaultKind::BookFailover: return u"book-failover"_s;
    case FaultKind::StandbyLoss: return u"standby-loss"_s;
    }
    return {};
}

std::optional<FaultKind> faultFromName(const QString &name)
{
    for (FaultKind k : allFaultKinds())
        if (faultName(k) == name)
            return k;
    return std::nullopt;
}

bool isGlobalFault(FaultKind kind)
{
    return kind == FaultKind::RedisRestart || kind == FaultKind::ScriptFlush || kind == FaultKind::NodeFailover
        || kind == FaultKind::ServerKill || isFormationFault(kind);
}

bool isFormationFault(FaultKind kind)
{
    return kind == FaultKind::BookFailover || kind == FaultKind::StandbyLoss;
}

QString faultLeftOutReason(FaultKind kind, const std::optional<RedisUrl> &gate)
{
    if (kind == FaultKind::ServerKill)
        return u"it needs a running server (drill --via URL)"_s;
    if (isFormationFault(kind))
        return u"it needs a formation the drill can act it out on (drill --via URL --formation FILE)"_s;
    const bool needsGate = kind == FaultKind::CrashAfterGate || isGlobalFault(kind);
    if (needsGate && (!gate || gate->isNone()))
        return u"it needs a gate, and this drill runs book-only (--redis none)"_s;
    if (kind == FaultKind::NodeFailover && !gate->isCluster())
        return u"it needs a Redis Cluster gate (--redis redis-cluster://...)"_s;
    return {};
}

double defaultFaultRate(FaultKind kind)
{
    // Chance per request. The restarts are rare on purpose: each one stalls every worker
    // for the time the server takes to come back.
    switch (kind) {
    case FaultKind::CrashAfterGate: return 0.005;
    case FaultKind::LostCallback: return 0.02;
    case FaultKind::DuplicateCallback: return 0.05;
    case FaultKind::LatePayment: return 0.02;
    case FaultKind::RedisRestart: return 0.0002;
    case FaultKind::ScriptFlush: return 0.0005;
    case FaultKind::DbError: return 0.005;
    case FaultKind::NodeFailover: return 0.00005; // each one stops a master for a few node timeouts
    case FaultKind::ServerKill: return 0.0001;    // each one stalls the buyers until the server is back
    case FaultKind::BookFailover:                 // each one stops the book's writes for the failover
    case FaultKind::StandbyLoss: return 0.00005;
    }
    return 0;
}

Result<FaultSpec> parseFaults(const QString &text)
{
    FaultSpec spec;
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty() || trimmed == u"none"_s)
        return spec;
    if (trimmed == u"all"_s) {
        for (FaultKind k : allFaultKinds())
            spec.rates.insert(k, defaultFaultRate(k));
        spec.forceEach = true;
        return spec;
    }
    QStringList names;
    for (FaultKind k : allFaultKinds())
        names << faultName(k);
    for (const QString &part : trimmed.split(u',')) {
        const QString item = part.trimmed();
        const QString name = item.section(u'=', 0, 0);
        const auto kind = faultFromName(name);
        if (!kind)
            return fail(ErrorCode::InvalidArgument,
                        u"faults: unknown fault %1 (use all, none, or NAME[=RATE],... with NAME one of %2)"_s.arg(
                            quoteForMessage(name), names.join(u", "_s)),
                        u"faults"_s);
        double rate = defaultFaultRate(*kind);
        if (item.section(u'=', 1) == u"once"_s) {
            rate = 0;
            spec.once.insert(*kind);
        } else if (item.contains(u'=')) {
            bool ok = false;
            rate = item.section(u'=', 1).toDouble(&ok);
            if (!ok || !std::isfinite(rate) || rate < 0 || rate > 1)
                return fail(ErrorCode::InvalidArgument,
                            u"faults: the rate of %1 must be a chance per request from 0 to 1 or once, got %2"_s.arg(
                                name, quoteForMessage(item.section(u'=', 1))),
                            u"faults"_s);
        }
        if (spec.rates.contains(*kind))
            return fail(ErrorCode::InvalidArgument, u"faults: %1 given twice"_s.arg(name), u"faults"_s);
        spec.rates.insert(*kind, rate);
    }
    return spec;
}

QString DrillParameters::freshSku()
{
    return u"drill-"_s + QDateTime::currentDateTimeUtc().toString(u"yyyyMMdd-HHmmss-zzz"_s);
}

void DrillOptions::useProfile(const ResolvedProfile &profile)
{
    db = profile.book;
    redis = profile.gate;
    embeddedDataDir = profile.gateMode == GateMode::Embedded ? profile.dataDir : QString();
    operatorName = profile.operatorName;
}

QString DrillOptions::leftOutReason(FaultKind kind) const
{
    if (kind == FaultKind::ServerKill) {
        if (!via)
            return faultLeftOutReason(kind, redis);
        if (!via->killServer && !via->formationFault)
            return u"the drill does not know how to restart the server (--server-pid-file FILE, with "
                   u"--server-command CMD unless a supervisor restarts it, or a --formation FILE)"_s;
        return {};
    }
    if (isFormationFault(kind))
        return via && via->formationFault ? QString() : faultLeftOutReason(kind, redis);
    if (via && (kind == FaultKind::CrashAfterGate || kind == FaultKind::DbError))
        return u"an inside fault: with --via the drill reaches the engine only over HTTP"_s;
    return faultLeftOutReason(kind, redis);
}

Result<void> DrillOptions::validate() const
{
    if (auto r = checkSkuId(sku); !r)
        return std::unexpected(r.error());
    if (stock < 1 || stock > kMaxQuantity)
        return fail(ErrorCode::InvalidArgument,
                    u"stock must be a whole number of units from 1 to %1, got %2"_s.arg(kMaxQuantity).arg(stock),
                    u"stock"_s);
    if (buyers < 1 || buyers > kMaxBuyers)
        return fail(ErrorCode::InvalidArgument, u"buyers must be from 1 to %1, got %2"_s.arg(kMaxBuyers).arg(buyers),
                    u"buyers"_s);
    if (concurrency < 1 || concurrency > kMaxConcurrency)
        return fail(ErrorCode::InvalidArgument,
                    u"concurrency must be from 1 to %1, got %2"_s.arg(kMaxConcurrency).arg(concurrency),
                    u"concurrency"_s);
    if (bookWriters < 1 || bookWriters > 64)
        return fail(ErrorCode::InvalidArgument, u"book-writers must be from 1 to 64, got %1"_s.arg(bookWriters),
                    u"book-writers"_s);
    if (!std::isfinite(payRatio) || payRatio < 0 || payRatio > 1)
        return fail(ErrorCode::InvalidArgument, u"pay-ratio must be a share from 0 to 1, got %1"_s.arg(payRatio),
                    u"pay-ratio"_s);
    if (holdSeconds < 1 || holdSeconds > kMaxHoldSeconds)
        return fail(ErrorCode::InvalidArgument,
                    u"hold-seconds must be from 1 to %1, got %2"_s.arg(kMaxHoldSeconds).arg(holdSeconds),
                    u"hold-seconds"_s);
    // `all` leaves out what cannot run here (the report says so); a kind asked for by name
    // that cannot is bad input.
    for (auto it = faults.rates.cbegin(); it != faults.rates.cend() && !faults.forceEach; ++it)
        if (const QString why = leftOutReason(it.key()); !why.isEmpty())
            return fail(ErrorCode::InvalidArgument, u"faults: %1: %2"_s.arg(faultName(it.key()), why), u"faults"_s);
    return {};
}

} // namespace flashstock
