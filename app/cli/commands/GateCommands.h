#pragma once

#include "Command.h"

namespace flashstock {

/// `gate rebuild SKU`: reloads the SKU's gate from the book of record.
class GateRebuildCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `embedded status` / `embedded stop`: the data dir's private redis-server.
class EmbeddedCommand : public Command {
public:
    explicit EmbeddedCommand(bool stop) : m_stop(stop) {}
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;

private:
    bool m_stop;
};

} // namespace flashstock
