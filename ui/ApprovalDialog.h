#pragma once

#include "reconcile/Reconciler.h"

#include <QDialog>

class QLineEdit;
class QPushButton;

namespace flashstock {

/// Confirms an approval or a rejection of one pending discrepancy: shows exactly what will
/// change (the correction the reconciler proposes, the figure before and after, who signs
/// the adjustment) and requires a reason before the confirm button is enabled. Touches no
/// engine: the caller sends the decision on accept. GUI thread.
class ApprovalDialog : public QDialog {
    Q_OBJECT
public:
    ApprovalDialog(const Discrepancy &discrepancy, bool approve, const QString &operatorName,
                   QWidget *parent = nullptr);

    /// The reason typed, trimmed.
    QString reason() const;
    bool isApproval() const { return m_approve; }
    qint64 discrepancyId() const { return m_id; }
    QLineEdit *reasonEdit() const { return m_reason; }
    QPushButton *confirmButton() const { return m_confirm; }
    /// The "what will change" text, as shown.
    QString changeSummary() const { return m_summary; }

private:
    qint64 m_id = 0;
    bool m_approve = true;
    QString m_summary;
    QLineEdit *m_reason = nullptr;
    QPushButton *m_confirm = nullptr;
};

} // namespace flashstock
