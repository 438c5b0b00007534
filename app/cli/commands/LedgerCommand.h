#pragma once

#include "Command.h"

namespace flashstock {

/// `ledger --sku S | --order O [--limit N]`: the trace of a SKU or an order, oldest first.
class LedgerCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

} // namespace flashstock
