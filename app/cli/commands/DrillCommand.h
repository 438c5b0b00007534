#pragma once

#include "Command.h"

namespace flashstock {

/// `drill [--sku S] [--stock N] [--buyers M] [--concurrency C] [--pay-ratio R]
/// [--hold-seconds H] [--faults all|none|NAME[=RATE],...] [--seed S]`: the rehearsal
/// (core/drill/Drill) on the same --db/--redis/--data-dir as every command (default: the
/// data dir's SQLite book and private redis-server, which redis-restart really restarts).
/// Progress goes to stderr (one line updated in place on a terminal, a plain line about
/// every second otherwise); the report to stdout as text or `--json` (DESIGN.md shape).
/// Exit 0 if every invariant holds, nothing is oversold or stuck and every injected fault
/// was healed; 1 otherwise (the report is still printed) or when a server fails; 2 for bad
/// options or an existing SKU.
class DrillCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

} // namespace flashstock
