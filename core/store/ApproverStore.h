#pragma once

#include "Result.h"

#include <QString>
#include <QStringList>

namespace flashstock {

class Database;

/// The approver policy as the book holds it (DESIGN.md, "Who may decide").
struct ApproverPolicy {
    QStringList approvers;      ///< who may decide discrepancies and change this policy, by name
    qint64 fourEyesUnits = 100; ///< a correction above this many units needs two different approvers
    /// True if `name` may decide.
    bool allows(const QString &name) const { return approvers.contains(name); }
};

/// The book's approver policy (tables `approvers`, `approval_policy`). Every change needs an
/// approver, checked in the change's own transaction. Thread affinity: its Database's.
class ApproverStore {
public:
    explicit ApproverStore(Database &db);

    /// The policy. While the book has never had approvers, `seed` (the data dir's
    /// `[approval] approvers=`) becomes its list, once; later the seed is ignored. Names in
    /// `seed` that are not valid names (checkName) are skipped.
    [[nodiscard]] Result<ApproverPolicy> policy(const QStringList &seed);
    /// Adds approver `name` in the name of approver `by`. False if `name` was one already.
    /// NotPermitted naming `operator` unless `by` is an approver; InvalidArgument for a bad name.
    [[nodiscard]] Result<bool> add(const QString &name, const QString &by);
    /// Removes approver `name` in the name of approver `by`. NotPermitted as add;
    /// InvalidArgument (field `name`) for a name not on the list or the last approver (nobody
    /// could ever decide again).
    [[nodiscard]] Result<void> remove(const QString &name, const QString &by);
    /// Sets the four-eyes threshold (units, 0..2^31-1) in the name of approver `by`.
    [[nodiscard]] Result<void> setFourEyesUnits(qint64 units, const QString &by);

    /// NotPermitted (field `operator`) unless `name` is on the book's approver list. Called
    /// inside the caller's transaction: the one check of who may decide.
    [[nodiscard]] static Result<void> requireApprover(Database &db, const QString &name);

private:
    Database &m_db;
};

} // namespace flashstock
