#pragma once

#include "reconcile/Reconciler.h"

#include <QDialog>

class QLineEdit;
class QPushButton;

namespace flashstock {

/// Confirms an approval or a rejection of one pending discrepancy: shows exactly what will
/// change (the correction the reconciler proposes and what it does to the bucket, its ledger
/// or the order; whether this approval applies it or is the first of two, by the book's
/// four-eyes policy; who signs it) and requires a reason before the confirm button is
/// enabled. Touches no engine: the caller sends the decision on accept, with decidesOn().
/// GUI thread.
class ApprovalDialog : public QDialog {
    Q_OBJECT
public:
    /// `fourEyesUnits`: the book's policy (a correction above it needs two approvers); -1 if
    /// not known yet.
    ApprovalDialog(const Discrepancy &discrepancy, bool approve, const QString &operatorName,
                   qint64 fourEyesUnits = -1, QWidget *parent = nullptr);

    /// The reason typed, trimmed.
    QString reason() const;
    bool isApproval() const { return m_approve; }
    qint64 discrepancyId() const { return m_id; }
    /// The correction shown: what an approval decides on (Reconciler::approve).
    const Correction &decidesOn() const { return m_correction; }
    QLineEdit *reasonEdit() const { return m_reason; }
    QPushButton *confirmButton() const { return m_confirm; }
    /// The "what will change" text, as shown.
    QString changeSummary() const { return m_summary; }

private:
    qint64 m_id = 0;
    bool m_approve = true;
    Correction m_correction;
    QString m_summary;
    QLineEdit *m_reason = nullptr;
    QPushButton *m_confirm = nullptr;
};

} // namespace flashstock
