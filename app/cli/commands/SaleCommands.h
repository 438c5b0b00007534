#pragma once

#include "Command.h"
#include "Domain.h"

namespace flashstock {

/// `sale create --sku S [--start ISO] [--end ISO] [--hold-seconds H] [--per-user-limit L]`:
/// defines a flash sale of the SKU's available stock; it stays closed until `sale start`.
class SaleCreateCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `sale start ID` / `sale pause ID` / `sale stop ID`: opens (or resumes), pauses or ends
/// the sale in book and gate (idempotent).
class SaleStatusCommand : public Command {
public:
    explicit SaleStatusCommand(SaleStatus target) : m_target(target) {}
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;

private:
    QString verb() const;
    SaleStatus m_target;
};

/// `sale book-only ID on|off`: reserves skip the gate (while Redis is down), or use it again
/// (the gate is rebuilt from the book).
class SaleBookOnlyCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `sale list`: every sale, newest first.
class SaleListCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

} // namespace flashstock
