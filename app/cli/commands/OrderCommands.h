#pragma once

#include "Command.h"

namespace flashstock {

/// `reserve --order O --sku S --qty N [--user U]` or `--line S:N` repeated: one reservation,
/// all lines or none.
class ReserveCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `confirm --order O --payment P`: payment captured.
class ConfirmCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `release --order O --reason timeout|cancel|risk`: gives the units back.
class ReleaseCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `expire [--every SECONDS]`: releases every hold that is due, by the database clock; with
/// `--every`, again every SECONDS until SIGINT/SIGTERM (one line per run).
class ExpireCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

} // namespace flashstock
