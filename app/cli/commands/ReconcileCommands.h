#pragma once

#include "Command.h"
#include "reconcile/Reconciler.h"

#include <QJsonObject>

namespace flashstock {

/// One discrepancy as JSON: id, kind, sku, status, delta, and the rest of its fields.
QJsonObject discrepancyJson(const Discrepancy &d);

/// `reconcile [--every SECONDS] [--grace SECONDS] [--alert-url URL]`: one pass (exit 3 iff
/// something waits for approval), or a loop until SIGINT/SIGTERM (one line per pass).
class ReconcileCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `discrepancy list [--status S]`.
class DiscrepancyListCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `discrepancy show ID`.
class DiscrepancyShowCommand : public Command {
public:
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

/// `discrepancy approve ID --reason TEXT` / `discrepancy reject ID --reason TEXT`; the
/// approver is `--operator`; exit 4 when not on the approver list.
class DiscrepancyDecideCommand : public Command {
public:
    explicit DiscrepancyDecideCommand(bool approve) : m_approve(approve) {}
    QStringList words() const override;
    QString synopsis() const override;
    QString summary() const override;
    QList<QCommandLineOption> options() const override;
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;

private:
    bool m_approve;
};

} // namespace flashstock
