#include "Cli.h"

#include "BuildInfo.h"
#include "CliContext.h"
#include "ContractJson.h"
#include "Identifiers.h"
#include "commands/BackupCommand.h"
#include "commands/BenchCommand.h"
#include "commands/CompletionCommand.h"
#include "commands/DrillCommand.h"
#include "commands/GateCommands.h"
#include "commands/LedgerCommand.h"
#include "commands/OrderCommands.h"
#include "commands/ReconcileCommands.h"
#include "commands/SaleCommands.h"
#include "commands/SkuCommands.h"
#include "commands/TokenCommands.h"
#include "commands/ApproverCommands.h"

#include <QCommandLineParser>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace flashstock {

int exitCodeFor(const Error &error)
{
    switch (error.code) {
    case ErrorCode::InvalidArgument:
    case ErrorCode::NotFound: return ExitUsage; // an unknown order is bad input to the CLI
    case ErrorCode::NotPermitted: return ExitNotPermitted;
    case ErrorCode::Unavailable:
    case ErrorCode::Conflict:
    case ErrorCode::Internal:
    case ErrorCode::OutcomeUnknown: return ExitRuntime;
    }
    return ExitRuntime;
}

CommandOutput errorOutput(const Error &error)
{
    CommandOutput out;
    out.exitCode = exitCodeFor(error);
    out.json = errorJson(error);
    out.text = u"error: "_s + error.message + u'\n';
    return out;
}

Result<void> noPositional(const QStringList &args)
{
    if (!args.isEmpty())
        return fail(ErrorCode::InvalidArgument,
                    u"arguments: unexpected argument %1"_s.arg(quoteForMessage(args.first())), u"arguments"_s);
    return {};
}

namespace {

void addOptions(QCommandLineParser &parser, const QList<QCommandLineOption> &options, QStringList &seen)
{
    for (const QCommandLineOption &o : options) {
        if (seen.contains(o.names().constFirst()))
            continue;
        seen << o.names();
        parser.addOption(o);
    }
}

void print(QTextStream &out, QTextStream &err, const CommandOutput &output, bool json)
{
    if (json) {
        out << QString::fromUtf8(QJsonDocument(output.json).toJson(QJsonDocument::Compact)) << '\n';
        if (output.exitCode != ExitOk && output.json.contains(u"error"_s))
            err << output.text;
    } else if (output.exitCode == ExitOk || !output.json.contains(u"error"_s)) {
        out << printable(output.text, true); // stored text never drives the terminal
    } else {
        err << printable(output.text, true);
    }
    out.flush();
    err.flush();
}

} // namespace

Cli::Cli()
{
    for (Commands (*area)() : {skuCommands, orderCommands, ledgerCommands, saleCommands, gateCommands, backupCommands,
                               benchCommands, drillCommands, reconcileCommands, tokenCommands, approverCommands})
        for (auto &command : area())
            m_commands.push_back(std::move(command));
    m_commands.push_back(completionCommand(*this));
}

Cli::~Cli() = default;

QList<QCommandLineOption> Cli::globalOptions()
{
    QList<QCommandLineOption> options{{u"data-dir"_s, u"Where the embedded defaults live (env FLASHSTOCK_DATA_DIR)."_s, u"DIR"_s},
            {u"db"_s, u"Book of record: sqlite:///file.db, sqlite:////abs/file.db or "
                      u"postgresql://user:pass@host:port/db."_s, u"URL"_s},
            {u"redis"_s,
             u"Gate: redis://[:pass@]host:port[/n], unix:///path/redis.sock, "
             u"redis-cluster://[:pass@]host:port[,host:port...], or none (?wait=N: writes wait for N replicas). "
             u"The password may come from FLASHSTOCK_REDIS_PASSWORD."_s,
             u"URL"_s},
            {u"json"_s, u"Print one JSON object on stdout."_s},
            {u"operator"_s, u"Who is acting (default: the OS user)."_s, u"NAME"_s},
            {{u"h"_s, u"help"_s}, u"Show help."_s},
            {u"version"_s, u"Show the version and the git revision it was built from."_s}};
    for (const EngineProfile::Option &o : EngineProfile::passwordFileOptions())
        options.insert(3, QCommandLineOption(o.name, o.help, o.valueName));
    return options;
}

QList<std::pair<int, QString>> Cli::exitCodes()
{
    return {{ExitOk, u"done (a refusal such as out_of_stock too)"_s},
            {ExitRuntime, u"runtime failure (server unreachable, I/O, conflict after retries)"_s},
            {ExitUsage, u"bad usage or input"_s},
            {ExitPending, u"discrepancies wait for approval"_s},
            {ExitNotPermitted, u"not permitted (the operator is not an approver)"_s}};
}

QString Cli::usage() const
{
    QString text = u"Usage: flashstock-cli [global options] COMMAND ...\n\nCommands:\n"_s;
    for (const auto &c : m_commands)
        text += u"  %1\n      %2\n"_s.arg(c->spec().synopsis, c->spec().summary);
    text += u"\nGlobal options (before or after the command words):\n"_s;
    for (const QCommandLineOption &o : globalOptions()) {
        const QString name = u"--"_s + o.names().constLast() + (o.valueName().isEmpty() ? QString() : u' ' + o.valueName());
        text += u"  %1  %2\n"_s.arg(name, -22).arg(o.description());
    }
    text += u"\nExit codes:\n"_s;
    for (const auto &[code, meaning] : exitCodes())
        text += u"  %1  %2\n"_s.arg(code).arg(meaning);
    return text;
}

int Cli::run(const QStringList &arguments, QTextStream &out, QTextStream &err)
{
    const QStringList argv = QStringList{u"flashstock-cli"_s} + arguments;
    const bool wantsJson = arguments.contains(u"--json"_s) || arguments.contains(u"-json"_s);
    auto usageError = [&](const QString &field, const QString &message) {
        const QString text = message.startsWith(field + u':') ? message : field + u": "_s + message;
        CommandOutput o = errorOutput({ErrorCode::InvalidArgument, text, field});
        if (!wantsJson)
            o.text += u"Run flashstock-cli --help for usage.\n"_s;
        print(out, err, o, wantsJson);
        return int(ExitUsage);
    };

    // First pass: every option of every command, to find the command words.
    QCommandLineParser scan;
    scan.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    QStringList seen;
    addOptions(scan, globalOptions(), seen);
    for (const auto &c : m_commands)
        addOptions(scan, c->spec().options, seen);
    if (!scan.parse(argv))
        return usageError(u"arguments"_s, scan.errorText());
    const QStringList positional = scan.positionalArguments();

    Command *command = nullptr;
    for (const auto &c : m_commands) {
        const QStringList &words = c->spec().words;
        if (positional.mid(0, words.size()) == words && (!command || words.size() > command->spec().words.size()))
            command = c.get();
    }
    if (!command && scan.isSet(u"version"_s)) {
        if (wantsJson)
            out << QString::fromUtf8(QJsonDocument(QJsonObject{{u"version"_s, buildVersion()},
                                                               {u"revision"_s, buildRevision()}})
                                         .toJson(QJsonDocument::Compact))
                << '\n';
        else
            out << u"flashstock-cli "_s << versionLine() << '\n';
        out.flush();
        return ExitOk;
    }
    if (!command) {
        const bool askedForHelp = scan.isSet(u"help"_s) || (!positional.isEmpty() && positional.first() == u"help"_s);
        if (positional.isEmpty() && !askedForHelp)
            return usageError(u"command"_s, u"no command given (flashstock-cli --help lists them)"_s);
        if (askedForHelp) {
            if (wantsJson)
                out << QString::fromUtf8(QJsonDocument(QJsonObject{{u"usage"_s, usage()}}).toJson(QJsonDocument::Compact))
                    << '\n';
            else
                out << usage();
            out.flush();
            return ExitOk;
        }
        return usageError(u"command"_s, u"unknown command '%1'"_s.arg(positional.join(u' ')));
    }

    // Second pass: only the global options and this command's.
    QCommandLineParser parser;
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    seen.clear();
    addOptions(parser, globalOptions(), seen);
    const CommandSpec &spec = command->spec();
    addOptions(parser, spec.options, seen);
    if (!parser.parse(argv))
        return usageError(u"arguments"_s, u"%1 (usage: flashstock-cli %2)"_s.arg(parser.errorText(), spec.synopsis));
    if (parser.isSet(u"help"_s)) {
        out << u"Usage: flashstock-cli %1\n%2\n"_s.arg(spec.synopsis, spec.summary);
        for (const QCommandLineOption &o : spec.options)
            out << u"  --%1 %2  %3\n"_s.arg(o.names().constFirst(), o.valueName(), o.description());
        out.flush();
        return ExitOk;
    }
    for (const QString &name : {u"data-dir"_s, u"db"_s, u"redis"_s, u"operator"_s, u"stock"_s, u"qty"_s, u"order"_s,
                                u"sku"_s, u"payment"_s, u"reason"_s, u"user"_s, u"buckets"_s, u"limit"_s, u"start"_s,
                                u"end"_s, u"hold-seconds"_s, u"per-user-limit"_s, u"from"_s, u"to"_s, u"count"_s}) {
        if (seen.contains(name) && parser.values(name).size() > 1)
            return usageError(name, u"given more than once"_s);
    }

    // An empty value is a mistake (an unset variable in a script), never "use the default".
    for (const QString &name : {u"data-dir"_s, u"db"_s, u"redis"_s, u"operator"_s}) {
        if (parser.isSet(name) && parser.value(name).trimmed().isEmpty())
            return usageError(name, u"--%1 must not be empty"_s.arg(name));
    }

    CliContext ctx(out, err);
    ctx.json = parser.isSet(u"json"_s);
    ctx.profile.dataDir = EngineProfile::dataDirFor(parser.value(u"data-dir"_s));
    ctx.profile.dbUrl = parser.value(u"db"_s);
    ctx.profile.redisUrl = parser.value(u"redis"_s);
    for (const EngineProfile::Option &o : EngineProfile::passwordFileOptions())
        if (parser.isSet(o.name))
            ctx.profile.setPasswordFile(o.name, parser.value(o.name));
    ctx.profile.operatorName = parser.isSet(u"operator"_s) ? parser.value(u"operator"_s) : EngineProfile::osUserName();

    const CommandOutput output = command->execute(ctx, parser, positional.mid(spec.words.size()));
    for (const QString &note : ctx.takeNotes())
        err << note << '\n';
    print(out, err, output, ctx.json);
    return output.exitCode;
}

} // namespace flashstock
