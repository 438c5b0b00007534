#include "GateCommands.h"

#include "CliContext.h"
#include "ContractJson.h"
#include "Identifiers.h"
#include "gate/EmbeddedRedis.h"
#include "gate/Gate.h"

#include <QJsonArray>

#include <QCommandLineParser>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// `gate rebuild SKU` / `gate rebuild --all`: reloads one SKU's gate, or every SKU's, from
/// the book of record (after a restore of the book, or a gate that lost its data).
struct GateRebuild final : Command {
    GateRebuild()
        : Command({{u"gate"_s, u"rebuild"_s}, u"gate rebuild (SKU | --all)"_s,
                   u"reload a SKU's gate, or every SKU's, from the book of record"_s,
                   {{u"all"_s, u"Every SKU of the book, in order (after a restore of the book)."_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput GateRebuild::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    const bool all = parser.isSet(u"all"_s);
    if (all ? !args.isEmpty() : args.size() != 1)
        return errorOutput({ErrorCode::InvalidArgument,
                            u"sku: expected exactly one SKU or --all (usage: gate rebuild (SKU | --all))"_s, u"sku"_s});
    if (!all)
        if (auto r = checkSkuId(args.first()); !r)
            return errorOutput(r.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    QStringList skus = args;
    if (all) {
        auto listed = (*engine)->book().skus();
        if (!listed)
            return errorOutput(listed.error());
        skus = *listed;
    }
    CommandOutput out;
    QJsonArray rebuiltJson;
    for (const QString &sku : std::as_const(skus)) {
        auto rebuilt = (*engine)->rebuildGate(sku);
        if (!rebuilt) {
            // The SKUs before it are rebuilt; this one and those after it are not: say which.
            CommandOutput failed = errorOutput(rebuilt.error());
            if (all) {
                failed.json.insert(u"rebuilt"_s, rebuiltJson);
                failed.text = u"error: gate of %1 not rebuilt (%2 of %3 SKUs rebuilt before it; run it again): %4\n"_s
                                  .arg(sku).arg(rebuiltJson.size()).arg(skus.size()).arg(rebuilt.error().message);
            }
            return failed;
        }
        rebuiltJson.append(QJsonObject{{u"sku"_s, sku}, {u"gate"_s, QJsonObject{{u"available"_s, *rebuilt}}}});
        out.text += u"gate of %1 rebuilt from the book: available %2\n"_s.arg(sku).arg(*rebuilt);
    }
    if (all) {
        out.json = {{u"rebuilt"_s, rebuiltJson}};
        if (skus.isEmpty())
            out.text = u"the book has no SKU: nothing to rebuild\n"_s;
    } else {
        out.json = rebuiltJson.first().toObject();
    }
    return out;
}

/// `gate script-keys SKU [--order O] [--user U] [--qty N]`: the reserve script call the
/// gate would send for that line (SHA1, KEYS, ARGV), computed by the gate's own code, so a
/// tool outside (redis-benchmark in scripts/bench-server.sh) runs the very same call.
/// Needs no server. Text: one line `EVALSHA SHA NUMKEYS KEYS... ARGS...` (the identifiers
/// are checked, so it splits on spaces); JSON: `{"script", "sha1", "numkeys", "keys",
/// "args", "evalsha"}`.
struct GateScriptKeys final : Command {
    GateScriptKeys()
        : Command({{u"gate"_s, u"script-keys"_s}, u"gate script-keys SKU [--order O] [--user U] [--qty N]"_s,
                   u"print the EVALSHA call (script SHA1, keys, arguments) the gate's reserve sends for one line"_s,
                   {{u"order"_s, u"Order id of the line (default bench-order; redis-benchmark's __rand_int__ "
                                 u"is a valid part of one)."_s, u"O"_s},
                    {u"user"_s, u"User of the line (default: none)."_s, u"U"_s},
                    {u"qty"_s, u"Units (default 1)."_s, u"N"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput GateScriptKeys::execute(CliContext &, const QCommandLineParser &parser, const QStringList &args)
{
    if (args.size() != 1)
        return errorOutput({ErrorCode::InvalidArgument,
                            u"sku: expected exactly one SKU (usage: gate script-keys SKU)"_s, u"sku"_s});
    GateReserveLine line{args.first(), parser.isSet(u"order"_s) ? parser.value(u"order"_s) : u"bench-order"_s,
                         parser.value(u"user"_s), 1};
    if (parser.isSet(u"qty"_s)) {
        auto qty = parseQuantity(parser.value(u"qty"_s));
        if (!qty)
            return errorOutput(qty.error());
        line.qty = *qty;
    }
    if (auto r = checkSkuId(line.sku); !r)
        return errorOutput(r.error());
    if (auto r = checkOrderId(line.order); !r)
        return errorOutput(r.error());
    if (!line.user.isEmpty())
        if (auto r = checkSkuId(line.user, u"user"_s); !r) // a word without spaces, as the text line needs
            return errorOutput(r.error());
    const GateScriptCall call = Gate::reserveCall(line);
    QStringList argv{u"EVALSHA"_s, QString::fromLatin1(call.sha1), QString::number(call.keys.size())};
    QJsonArray keys, values;
    for (const QByteArray &k : call.keys) {
        keys.append(QString::fromUtf8(k));
        argv << QString::fromUtf8(k);
    }
    for (const QByteArray &a : call.args) {
        values.append(QString::fromUtf8(a));
        argv << QString::fromUtf8(a);
    }
    CommandOutput out;
    out.json = {{u"script"_s, u"reserve"_s}, {u"sha1"_s, QString::fromLatin1(call.sha1)},
                {u"numkeys"_s, int(call.keys.size())}, {u"keys"_s, keys}, {u"args"_s, values},
                {u"evalsha"_s, QJsonArray::fromStringList(argv)}};
    out.text = argv.join(u' ') + u'\n';
    return out;
}

/// `embedded status`: whether the data dir's private redis-server runs, and where.
struct EmbeddedStatus final : Command {
    EmbeddedStatus()
        : Command({{u"embedded"_s, u"status"_s}, u"embedded status"_s,
                   u"is the data dir's private redis-server running, and where"_s, {}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput EmbeddedStatus::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    const EmbeddedRedisStatus s = EmbeddedRedis(ctx.profile.dataDir).status();
    CommandOutput out;
    out.json = {{u"running"_s, s.running}, {u"process_alive"_s, s.processAlive}, {u"pid"_s, s.pid},
                {u"socket"_s, s.socketPath},
                {u"url"_s, s.url}, {u"dir"_s, s.workDir}, {u"log"_s, s.logFile},
                {u"held"_s, s.held ? QJsonValue(QJsonObject{{u"by"_s, s.heldBy}, {u"since"_s, isoTime(s.heldSinceMs)}})
                                   : QJsonValue()}};
    if (s.held && !s.running) {
        out.text = u"held down for maintenance by %1 since %2: no command starts it (embedded start lifts the "
                   u"hold; socket %3)\n"_s.arg(printable(s.heldBy), isoTime(s.heldSinceMs), s.socketPath);
        return out;
    }
    if (!s.running && s.processAlive) {
        out.text = u"NOT ANSWERING: redis-server pid %1 is alive but does not answer on %2 (log %3); "
                   u"embedded stop signals it\n"_s.arg(s.pid).arg(s.socketPath, s.logFile);
        return out;
    }
    out.text = s.running ? u"running (pid %1) at %2\n  data %3\n  log  %4\n"_s.arg(s.pid).arg(s.socketPath, s.workDir,
                                                                                             s.logFile)
                         : u"not running (it starts with the first command that needs the gate; socket %1)\n"_s.arg(
                               s.socketPath);
    return out;
}

/// `embedded stop [--hold]`: stops the data dir's private redis-server; `--hold` keeps it down.
struct EmbeddedStop final : Command {
    EmbeddedStop()
        : Command({{u"embedded"_s, u"stop"_s},
                   u"embedded stop [--hold]"_s,
                   u"stop the data dir's private redis-server"_s,
                   {{u"hold"_s, u"Keep it down for maintenance: no command starts it again (they run as with the "
                                u"gate unreachable) until embedded start."_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput EmbeddedStop::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    EmbeddedRedis embedded(ctx.profile.dataDir);
    const bool hold = parser.isSet(u"hold"_s);
    auto stopped = embedded.stop(5000, hold ? ctx.profile.operatorName : QString());
    if (!stopped)
        return errorOutput(stopped.error());
    CommandOutput out;
    out.json = {{u"stopped"_s, stopped->wasRunning}, {u"pid"_s, stopped->pid}, {u"held"_s, stopped->held},
                {u"socket"_s, embedded.socketPath()}};
    out.text = stopped->wasRunning ? u"stopped the private redis-server (pid %1) at %2\n"_s.arg(stopped->pid).arg(
                                         embedded.socketPath())
                                   : u"no private redis-server was running at %1\n"_s.arg(embedded.socketPath());
    out.text += stopped->held ? u"held down: no command starts it until embedded start\n"_s
                              : u"the next command that needs the gate starts it again (embedded stop --hold keeps "
                                u"it down)\n"_s;
    return out;
}

/// `embedded start`: lifts a hold and starts (or reuses) the data dir's private redis-server.
struct EmbeddedStart final : Command {
    EmbeddedStart()
        : Command({{u"embedded"_s, u"start"_s}, u"embedded start"_s,
                   u"start the data dir's private redis-server (lifting a hold of embedded stop --hold)"_s, {}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput EmbeddedStart::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    EmbeddedRedis embedded(ctx.profile.dataDir);
    const bool wasHeld = embedded.status().held;
    auto started = embedded.start(EmbeddedRedis::Hold::Release);
    if (!started)
        return errorOutput(started.error());
    const EmbeddedRedisStatus s = embedded.status();
    CommandOutput out;
    out.json = {{u"running"_s, s.running}, {u"started"_s, !embedded.wasReused()}, {u"pid"_s, s.pid},
                {u"hold_lifted"_s, wasHeld}, {u"socket"_s, s.socketPath}};
    out.text = u"%1 the private redis-server (pid %2) at %3%4\n"_s
                   .arg(embedded.wasReused() ? u"already running:"_s : u"started"_s)
                   .arg(s.pid)
                   .arg(s.socketPath, wasHeld ? u" (hold lifted)"_s : QString());
    return out;
}

} // namespace

Commands gateCommands()
{
    return makeCommands<GateRebuild, GateScriptKeys, EmbeddedStatus, EmbeddedStop, EmbeddedStart>();
}

} // namespace flashstock
