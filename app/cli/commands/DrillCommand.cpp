#include "DrillCommand.h"

#include "CliContext.h"
#include "DrillFormation.h"
#include "DrillVia.h"
#include "Engine.h"
#include "Identifiers.h"
#include "StopSignal.h"
#include "drill/Drill.h"
#include "open/EngineOpener.h"

#include <QCommandLineParser>
#include <QFile>

#include <cstdio>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

Error badNumber(const QString &field, const QString &what, const QString &value)
{
    return {ErrorCode::InvalidArgument, u"%1 must be %2, got %3"_s.arg(field, what, quoteForMessage(value)), field};
}

/// The integer value of option `field`, or `fallback` when absent.
Result<qint64> integerOption(const QCommandLineParser &parser, const QString &field, qint64 fallback)
{
    if (!parser.isSet(field))
        return fallback;
    bool ok = false;
    const qint64 v = parser.value(field).trimmed().toLongLong(&ok);
    if (!ok)
        return std::unexpected(badNumber(field, u"a whole number"_s, parser.value(field)));
    return v;
}

/// The bearer token of `drill --via`: the first line of --token-file (a bare secret, or a
/// curl header line `Authorization: Bearer SECRET`), else FLASHSTOCK_TOKEN, else none (a
/// server run with --no-auth). Never from the command line.
Result<QByteArray> viaToken(const QCommandLineParser &parser)
{
    if (!parser.isSet(u"token-file"_s))
        return qgetenv("FLASHSTOCK_TOKEN").trimmed();
    QFile f(parser.value(u"token-file"_s));
    if (!f.open(QIODevice::ReadOnly))
        return fail(ErrorCode::InvalidArgument,
                    u"token-file: cannot read %1: %2"_s.arg(quoteForMessage(f.fileName()), f.errorString()),
                    u"token-file"_s);
    QByteArray line = f.readLine().trimmed();
    if (const QByteArray header = "authorization: bearer "; line.toLower().startsWith(header))
        line = line.mid(header.size()).trimmed();
    if (line.isEmpty())
        return fail(ErrorCode::InvalidArgument,
                    u"token-file: %1 holds no token"_s.arg(quoteForMessage(f.fileName())), u"token-file"_s);
    return line;
}

void writeProgress(const DrillProgress &p, bool tty)
{
    const QString line = u"drill [%1] %2/%3 buyers answered, %4 units reserved, %5 paid, %6/s, %7 faults, %8 s"_s
                             .arg(p.phase).arg(p.answered).arg(p.buyers).arg(p.reservedUnits).arg(p.paidUnits)
                             .arg(p.ratePerS, 0, 'f', 0).arg(p.faults).arg(p.elapsedS, 0, 'f', 1);
    if (tty)
        std::fputs(qPrintable(u"\r\x1b[2K"_s + line), stderr);
    else
        std::fputs(qPrintable(line + u'\n'), stderr);
    std::fflush(stderr);
}

/// `drill [--sku S] [--stock N] [--buyers M] [--concurrency C] [--pay-ratio R]
/// [--hold-seconds H] [--faults all|none|NAME[=RATE],...] [--seed S]`: the rehearsal
/// (core/drill/Drill) on the same --db/--redis/--data-dir as every command (default: the
/// data dir's SQLite book and private redis-server, which redis-restart really restarts).
/// Progress goes to stderr (one line updated in place on a terminal, a plain line about
/// every second otherwise); the report to stdout as text or `--json` (DESIGN.md shape).
/// With `--via URL` the buyers and payment callbacks go to a running flashstock-server on
/// the same book and gate over HTTP (DrillVia), with the faults made from outside.
/// Exit 0 if every invariant holds, nothing is oversold or stuck and every injected fault
/// was healed; 1 otherwise (the report is still printed) or when a server fails; 2 for bad
/// options or an existing SKU.
struct DrillRun final : Command {
    DrillRun(const DrillParameters &d = {})
        : Command({{u"drill"_s},
                   u"drill [--sku S] [--stock N] [--buyers M] [--concurrency C] [--pay-ratio R] [--hold-seconds H] "
                   u"[--faults all|none|NAME[=RATE],...] [--seed S] [--via URL [--token-file FILE] "
                   u"[--server-pid-file FILE [--server-command CMD] | --formation FILE]]"_s,
                   u"rehearse a flash sale: M buyers race for N units with injected faults, then expiry, "
                   u"reconciliation and the invariants I1-I6 (exit 1 if any fails)"_s,
                   {{u"sku"_s, u"SKU the drill creates (must not exist; default drill-<UTC time>)."_s, u"S"_s},
                    {u"stock"_s, u"Units on sale (default %1)."_s.arg(d.stock), u"N"_s},
                    {u"buyers"_s, u"Buyers, one unit each (default %1)."_s.arg(d.buyers), u"M"_s},
                    {u"concurrency"_s, u"Worker threads, each with its own engine (default %1)."_s.arg(d.concurrency),
                     u"C"_s},
                    {u"pay-ratio"_s, u"Share of buyers who pay, 0 to 1 (default %1)."_s.arg(d.payRatio), u"R"_s},
                    {u"hold-seconds"_s, u"Hold of each reservation in seconds (default %1)."_s.arg(d.holdSeconds),
                     u"H"_s},
                    {u"faults"_s, u"all, none, or NAME[=RATE],... with NAME one of crash-after-gate, lost-callback, "
                                  u"duplicate-callback, late-payment, redis-restart, script-flush, db-error, node-failover "
                                  u"(a redis-cluster:// gate only), server-kill (--via only), book-failover, standby-loss "
                                  u"(--formation only); RATE: chance per request, or once; default %1."_s.arg(
                                      DrillParameters::defaultFaults()),
                     u"LIST"_s},
                    {u"seed"_s, u"Seed of the fault schedule (default %1)."_s.arg(d.seed), u"S"_s},
                    {u"via"_s, u"Send the buyers and payment callbacks over HTTP to the flashstock-server at URL "
                               u"(http://HOST:PORT), which must serve this drill's book and gate (the same --data-dir, "
                               u"--db, --redis); crash-after-gate and db-error are left out."_s, u"URL"_s},
                    {u"token-file"_s, u"With --via: file whose first line is the bearer token (reserve and pay "
                                      u"scopes; a curl header line works too); default FLASHSTOCK_TOKEN."_s, u"FILE"_s},
                    {u"server-pid-file"_s, u"With --via: the server's --pid-file; turns on server-kill (SIGKILL to "
                                           u"that process, then waits until a new one is ready)."_s, u"FILE"_s},
                    {u"server-command"_s, u"With --server-pid-file: how to start the server again after the kill (run "
                                          u"by /bin/sh, detached); without it a supervisor (systemd Restart=) must."_s,
                     u"CMD"_s},
                    {u"formation"_s, u"With --via: the formation behind URL as scripts/ha-lab.sh status --json describes "
                                     u"it (how to act out book-failover, standby-loss and server-kill, and to heal it); "
                                     u"turns those faults on."_s, u"FILE"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput DrillRun::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (!args.isEmpty())
        return errorOutput({ErrorCode::InvalidArgument,
                            u"arguments: drill takes no positional arguments, got %1"_s.arg(
                                quoteForMessage(args.join(u' '))),
                            u"arguments"_s});
    for (const QString &name : {u"sku"_s, u"stock"_s, u"buyers"_s, u"concurrency"_s, u"pay-ratio"_s,
                                u"hold-seconds"_s, u"faults"_s, u"seed"_s, u"via"_s, u"token-file"_s,
                                u"server-pid-file"_s, u"server-command"_s, u"formation"_s}) {
        if (parser.values(name).size() > 1)
            return errorOutput({ErrorCode::InvalidArgument, u"%1: given more than once"_s.arg(name), name});
    }
    DrillOptions o;
    o.sku = parser.isSet(u"sku"_s) ? parser.value(u"sku"_s) : DrillParameters::freshSku();
    auto stock = integerOption(parser, u"stock"_s, o.stock);
    auto buyers = integerOption(parser, u"buyers"_s, o.buyers);
    auto concurrency = integerOption(parser, u"concurrency"_s, o.concurrency);
    auto hold = integerOption(parser, u"hold-seconds"_s, o.holdSeconds);
    for (const auto *r : {&stock, &buyers, &concurrency, &hold})
        if (!*r)
            return errorOutput(r->error());
    o.stock = *stock;
    o.buyers = *buyers;
    if (*concurrency < 1 || *concurrency > DrillParameters::kMaxConcurrency)
        return errorOutput(badNumber(u"concurrency"_s, u"from 1 to %1"_s.arg(DrillParameters::kMaxConcurrency),
                                     parser.value(u"concurrency"_s)));
    o.concurrency = int(*concurrency);
    o.holdSeconds = *hold;
    if (parser.isSet(u"pay-ratio"_s)) {
        bool ok = false;
        o.payRatio = parser.value(u"pay-ratio"_s).trimmed().toDouble(&ok);
        if (!ok)
            return errorOutput(badNumber(u"pay-ratio"_s, u"a share from 0 to 1"_s, parser.value(u"pay-ratio"_s)));
    }
    if (parser.isSet(u"seed"_s)) {
        bool ok = false;
        o.seed = parser.value(u"seed"_s).trimmed().toULongLong(&ok);
        if (!ok)
            return errorOutput(badNumber(u"seed"_s, u"a whole number from 0 to 18446744073709551615"_s,
                                         parser.value(u"seed"_s)));
    }
    auto faults = parseFaults(parser.isSet(u"faults"_s) ? parser.value(u"faults"_s) : DrillParameters::defaultFaults());
    if (!faults)
        return errorOutput(faults.error());
    o.faults = *faults;
    // Validate before starting any server.
    auto profile = EngineOpener::resolve(ctx.profile);
    if (!profile)
        return errorOutput(profile.error());
    o.useProfile(*profile);
    for (const QString &name : {u"token-file"_s, u"server-pid-file"_s, u"formation"_s})
        if (parser.isSet(name) && !parser.isSet(u"via"_s))
            return errorOutput({ErrorCode::InvalidArgument, u"%1: only with --via URL"_s.arg(name), name});
    if (parser.isSet(u"server-command"_s) && !parser.isSet(u"server-pid-file"_s))
        return errorOutput({ErrorCode::InvalidArgument,
                            u"server-command: only with --server-pid-file FILE (the drill must know which process to "
                            u"kill and see the new one start)"_s,
                            u"server-command"_s});
    if (parser.isSet(u"formation"_s) && parser.isSet(u"server-pid-file"_s))
        return errorOutput({ErrorCode::InvalidArgument,
                            u"formation: not with --server-pid-file (the formation says how to kill a server)"_s,
                            u"formation"_s});
    if (parser.isSet(u"via"_s)) {
        auto token = viaToken(parser);
        if (!token)
            return errorOutput(token.error());
        DrillViaSettings settings;
        settings.base = QUrl(parser.value(u"via"_s), QUrl::StrictMode);
        settings.token = *token;
        settings.serverPidFile = parser.value(u"server-pid-file"_s);
        settings.serverCommand = parser.value(u"server-command"_s);
        // Called once the drill runs, on this thread, when the engine below is open.
        auto via = makeDrillVia(settings, [&ctx](const QString &sku) -> std::optional<qint64> {
            auto opened = ctx.engine();
            Engine *mine = opened ? *opened : nullptr;
            if (!mine || !mine->gate())
                return std::nullopt;
            const GateSide side = mine->gateLevels(sku);
            return side.reachable && side.available >= 0 ? std::optional<qint64>(side.available) : std::nullopt;
        });
        if (!via)
            return errorOutput(via.error());
        if (parser.isSet(u"formation"_s))
            if (auto f = useFormation(*via, parser.value(u"formation"_s)); !f)
                return errorOutput(f.error());
        o.via = *via;
    }
    if (auto v = o.validate(); !v)
        return errorOutput(v.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    if (const QString &down = ctx.gate().problem; !down.isEmpty())
        return errorOutput({ErrorCode::Unavailable, u"redis: the drill needs its gate, which is down: "_s + down,
                            u"redis"_s});
    const bool tty = isatty(STDERR_FILENO) == 1;
    o.progressIntervalMs = tty ? 200 : 1000;
    o.progress = [tty](const DrillProgress &p) { writeProgress(p, tty); };
    // Ctrl+C or SIGTERM: no new buyers, then the same wind-down as after the last one.
    StopSignal::install();
    o.cancelled = [] { return StopSignal::requested(); };

    auto report = Drill(o).run();
    if (tty) {
        std::fputs("\n", stderr);
        std::fflush(stderr);
    }
    if (!report)
        return errorOutput(report.error());
    CommandOutput out;
    out.json = report->toJson();
    out.text = report->toText();
    out.exitCode = report->passed() ? ExitOk : ExitRuntime;
    return out;
}

} // namespace

Commands drillCommands()
{
    return makeCommands<DrillRun>();
}

} // namespace flashstock
