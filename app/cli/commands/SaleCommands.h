#pragma once

#include "Command.h"

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

/// `sale start ID` / `sale stop ID`: opens or closes the sale in book and gate (idempotent).
class SaleStatusCommand : public Command {
public:
    explicit SaleStatusCommand(bool start) : m_start(start) {}
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;

private:
    bool m_start;
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
