#pragma once

#include "reconcile/Reconciler.h"

#include <QWidget>

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTextBrowser;
class QTimer;

namespace flashstock {

class ApprovalDialog;
class ConsoleSession;
class DiscrepancyModel;
class LedgerModel;

/// The reconciliation view: the discrepancies with filters (status, kind, SKU) that a refresh
/// never changes, a detail pane with the ledger trace behind the selected one (its order's
/// rows, or its SKU's and bucket's, newest first), Approve and Reject through an
/// ApprovalDialog, "Reconcile now", and copy and CSV export of the list. Follows the
/// selection (mouse or keyboard); its shortcuts work wherever the focus is inside the view.
/// Requests go through the ConsoleSession. GUI thread.
class ReconciliationView : public QWidget {
    Q_OBJECT
public:
    explicit ReconciliationView(ConsoleSession *session, QWidget *parent = nullptr);

    DiscrepancyModel *model() const { return m_model; }
    LedgerModel *traceModel() const { return m_trace; }
    QTableView *traceView() const { return m_traceView; }
    /// Forgets the discrepancies shown (a new connection).
    void clear();
    QTableView *table() const { return m_table; }
    QAction *reconcileAction() const { return m_reconcile; }
    QAction *approveAction() const { return m_approve; }
    QAction *rejectAction() const { return m_reject; }
    /// The line saying who the approvers are and whether the operator may approve.
    QLabel *approversLabel() const { return m_approvers; }
    /// Selects discrepancy `id` (clears filters that hide it). False if unknown.
    bool select(qint64 id);
    /// Opens the confirmation dialog for the selected discrepancy (non-modal for the event
    /// loop; window-modal for the operator). Returns it, or nullptr if nothing pending is selected.
    ApprovalDialog *confirmSelected(bool approve);
    /// Selects the newest pending discrepancy, else the first row.
    void selectFirstPending();
    /// Shows the filter for status word `status` ("" = all).
    void setStatusFilter(const QString &status);
    /// The status word the list is filtered by ("" = all).
    QString statusFilter() const;
    /// Lists the discrepancies again (keeping the filters and the selection), unless the
    /// book is not open or a listing asked for is still on its way. While shown, the view
    /// does this by itself every kRefreshMs.
    void refresh();
    /// How often the view lists the discrepancies again while it is shown, ms.
    static constexpr int kRefreshMs = 2000;

signals:
    /// A one-line message for the status bar.
    void message(const QString &text);

protected:
    /// Shown, it lists the discrepancies again (another process may have found some), and
    /// again every kRefreshMs until hidden.
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    const Discrepancy *selected() const;
    void updateDetail();
    void updateActions();
    void fitColumns();

    ConsoleSession *m_session = nullptr;
    DiscrepancyModel *m_model = nullptr;
    LedgerModel *m_trace = nullptr;
    class DiscrepancyFilter *m_filter = nullptr;
    QComboBox *m_status = nullptr;
    QComboBox *m_kind = nullptr;
    QLineEdit *m_sku = nullptr;
    QTableView *m_table = nullptr;
    QTextBrowser *m_detail = nullptr;
    QTableView *m_traceView = nullptr;
    QLabel *m_traceTitle = nullptr;
    QLabel *m_banner = nullptr;
    QLabel *m_approvers = nullptr;
    bool m_mayApprove = false; ///< the operator is on the book's approver list
    QAction *m_reconcile = nullptr;
    QAction *m_approve = nullptr;
    QAction *m_reject = nullptr;
    qint64 m_tracedId = -1;
    QString m_detailHtml; ///< what the detail pane shows of the selected discrepancy
    bool m_available = false;
    bool m_busy = false; ///< a reconcile pass is running
    bool m_listing = false; ///< a listing was asked for and has not come back
    QTimer *m_refresh = nullptr;
};

} // namespace flashstock
