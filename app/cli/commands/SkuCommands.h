#pragma once

#include "Command.h"

namespace flashstock {

/// `sku add SKU --stock N [--buckets B]`: creates a SKU with its initial stock (ledgered).
class SkuAddCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `sku show SKU`: the SKU's levels, book side (and gate side once a gate is configured).
class SkuShowCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `sku restock SKU --qty N [--reason TEXT]`: adds stock as an adjustment naming the operator.
class SkuRestockCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `sku rebalance SKU --from B --to B --qty N`: moves available units between buckets (ledgered).
class SkuRebalanceCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `sku buckets SKU --count N`: changes the number of buckets and spreads available units
/// evenly (ledgered).
class SkuBucketsCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

} // namespace flashstock
