#pragma once

#include <QString>
#include <QStringList>

namespace flashstock {

/// The operators who may approve or reject discrepancies: `FLASHSTOCK_APPROVERS`
/// (comma-separated) if set, else `[approval] approvers=...` in the data dir's
/// flashstock.ini. Names are trimmed; empty entries dropped. The CLI and the console
/// both ask here, so the rule is one.
QStringList configuredApprovers(const QString &dataDir);

} // namespace flashstock
