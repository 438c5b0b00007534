#pragma once

#include "Discrepancy.h"

#include <QString>
#include <QStringList>

namespace flashstock {

/// The data dir's `[approval] approvers=...` (flashstock.ini; names trimmed, empty entries
/// dropped): only the seed of the book's approver policy while the book has none
/// (ApproverStore::policy). The environment is never read: it cannot widen the policy.
QStringList seedApprovers(const QString &dataDir);

/// Where a decision made by this process comes from: the effective OS user (from the
/// password database, not $USER) and the host name.
DecisionOrigin decisionOrigin();

/// A decision by `operatorName` (as asserted) from this process (decisionOrigin()).
DecisionBy decisionByThisProcess(const QString &operatorName);

} // namespace flashstock
