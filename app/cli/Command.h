#pragma once

#include <QCommandLineOption>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

#include "Result.h"

class QCommandLineParser;

namespace flashstock {

class CliContext;

/// What a command produced: an exit code, the JSON object for `--json`, and text for people.
struct CommandOutput {
    int exitCode = 0;
    QJsonObject json;
    QString text;
};

/// Exit codes of the CLI contract (DESIGN.md).
enum ExitCode {
    ExitOk = 0,          ///< done, including a business refusal such as out_of_stock
    ExitRuntime = 1,     ///< server unreachable, I/O, conflict after retries
    ExitUsage = 2,       ///< bad usage or bad input
    ExitPending = 3,     ///< reconcile found discrepancies waiting for approval
    ExitNotPermitted = 4 ///< the operator is not an approver
};

/// The exit code for an Error.
int exitCodeFor(const Error &error);
/// `{"error": {"code", "message", "field"}}` with the exit code for `error`.
CommandOutput errorOutput(const Error &error);
/// InvalidArgument (field `arguments`) naming the first of `args` if there is any: for
/// commands that take no positional argument.
[[nodiscard]] Result<void> noPositional(const QStringList &args);

/// What a command is called and what it takes: data, set once by the command's constructor.
struct CommandSpec {
    QStringList words;                 ///< the command words, e.g. {"sku", "add"}
    QString synopsis;                  ///< usage after the program name, e.g. `sku add SKU --stock N`
    QString summary;                   ///< one line saying what it does
    QList<QCommandLineOption> options; ///< its own options (the runner adds the global ones)
};

/// One `flashstock-cli` subcommand: its spec (data) and execute(). Commands return their
/// output and the runner prints it as text or JSON; a command that prints as it goes (the
/// `--every` loops) writes to the context's streams, so tests run every command in-process.
class Command {
public:
    explicit Command(CommandSpec spec) : m_spec(std::move(spec)) {}
    virtual ~Command() = default;
    /// What the runner matches, parses and prints in the help.
    const CommandSpec &spec() const { return m_spec; }
    /// Runs the command. `args` are the positional arguments after the command words.
    virtual CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) = 0;

private:
    CommandSpec m_spec;
};

/// The commands of one area (a commands/*.cpp file), for the runner's table.
using Commands = std::vector<std::unique_ptr<Command>>;

/// One of each command type `C...`, in that order (each default-constructible).
template <typename... C>
Commands makeCommands()
{
    Commands commands;
    (commands.push_back(std::make_unique<C>()), ...);
    return commands;
}

} // namespace flashstock
