#pragma once

#include "Command.h"

namespace flashstock {

/// `bench [book] [--quick] [--seconds S] [--clients LIST] [--cases LIST] [--bench-pg URL]`:
/// the book benchmark (core/bench/BookBench) on a SQLite scratch file and, given a server
/// (`--bench-pg URL`, or `--db postgresql://...`), a scratch PostgreSQL database. Never
/// touches the operator's book. Prints a table (or `--json`); progress goes to stderr.
/// Exit 0 with figures; 1 if a correct path (guarded_row, bare_sql) oversold, lost units or
/// failed an attempt (the figures are still printed), or a server could not be used;
/// 2 for bad options.
class BenchCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

} // namespace flashstock
