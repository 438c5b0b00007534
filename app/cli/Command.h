#pragma once

#include <QCommandLineOption>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

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

/// One `flashstock-cli` subcommand: its words, options, and execute(). Commands write
/// nothing themselves; the runner prints their output as text or JSON.
class Command {
public:
    virtual ~Command() = default;
    /// The command words, e.g. {"sku", "add"}.
    virtual QStringList words() const = 0;
    /// Usage after the program name, e.g. `sku add SKU --stock N [--buckets B]`.
    virtual QString synopsis() const = 0;
    /// One line saying what it does.
    virtual QString summary() const = 0;
    /// Options of this command (the global ones are added by the runner).
    virtual QList<QCommandLineOption> options() const { return {}; }
    /// Runs the command. `args` are the positional arguments after the command words.
    virtual CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) = 0;
};

} // namespace flashstock
