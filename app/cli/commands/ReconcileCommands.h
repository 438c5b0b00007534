#pragma once

#include "Command.h"
#include "reconcile/Reconciler.h"

#include <QJsonObject>

namespace flashstock {

/// One discrepancy as JSON: id, kind, sku, status, delta, and the rest of its fields.
QJsonObject discrepancyJson(const Discrepancy &d);

/// `reconcile [--every SECONDS]`, `discrepancy list`, `discrepancy show ID`,
/// `discrepancy approve ID`, `discrepancy reject ID`: reconciliation, automatic and manual.
Commands reconcileCommands();

} // namespace flashstock
