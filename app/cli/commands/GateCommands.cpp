#include "GateCommands.h"

#include "CliContext.h"
#include "Identifiers.h"
#include "gate/EmbeddedRedis.h"

#include <QCommandLineParser>

using namespace Qt::StringLiterals;

namespace flashstock {

QStringList GateRebuildCommand::words() const { return {u"gate"_s, u"rebuild"_s}; }
QString GateRebuildCommand::synopsis() const { return u"gate rebuild SKU"_s; }
QString GateRebuildCommand::summary() const { return u"reload a SKU's gate from the book of record"_s; }

CommandOutput GateRebuildCommand::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    if (args.size() != 1)
        return errorOutput({ErrorCode::InvalidArgument, u"sku: expected exactly one SKU (usage: gate rebuild SKU)"_s,
                            u"sku"_s});
    if (auto r = checkSkuId(args.first()); !r)
        return errorOutput(r.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    auto rebuilt = (*engine)->rebuildGate(args.first());
    if (!rebuilt)
        return errorOutput(rebuilt.error());
    CommandOutput out;
    out.json = {{u"sku"_s, args.first()}, {u"gate"_s, QJsonObject{{u"available"_s, *rebuilt}}}};
    out.text = u"gate of %1 rebuilt from the book: available %2\n"_s.arg(args.first()).arg(*rebuilt);
    return out;
}

QStringList EmbeddedCommand::words() const { return {u"embedded"_s, m_stop ? u"stop"_s : u"status"_s}; }
QString EmbeddedCommand::synopsis() const { return m_stop ? u"embedded stop"_s : u"embedded status"_s; }
QString EmbeddedCommand::summary() const
{
    return m_stop ? u"stop the data dir's private redis-server"_s
                  : u"is the data dir's private redis-server running, and where"_s;
}

CommandOutput EmbeddedCommand::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    EmbeddedRedis embedded(ctx.dataDir);
    CommandOutput out;
    if (m_stop) {
        auto stopped = embedded.stop();
        if (!stopped)
            return errorOutput(stopped.error());
        out.json = {{u"stopped"_s, *stopped}, {u"socket"_s, embedded.socketPath()}};
        out.text = *stopped ? u"stopped the private redis-server at %1\n"_s.arg(embedded.socketPath())
                            : u"no private redis-server was running at %1\n"_s.arg(embedded.socketPath());
        return out;
    }
    const EmbeddedRedisStatus s = embedded.status();
    out.json = {{u"running"_s, s.running}, {u"process_alive"_s, s.processAlive}, {u"pid"_s, s.pid},
                {u"socket"_s, s.socketPath},
                {u"url"_s, s.url}, {u"dir"_s, s.workDir}, {u"log"_s, s.logFile}};
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

} // namespace flashstock
