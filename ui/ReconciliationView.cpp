#include "ReconciliationView.h"

#include "ApprovalDialog.h"
#include "ConsoleSession.h"
#include "ConsoleText.h"
#include "EngineWorker.h"
#include "Identifiers.h"
#include "TableExport.h"
#include "models/DiscrepancyModel.h"
#include "models/LedgerModel.h"
#include "models/ModelRoles.h"

#include <QAction>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace flashstock {

/// Matches status, kind and SKU against the model's raw values.
class DiscrepancyFilter : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    QString status, kind, sku;
    void refresh() { invalidateFilter(); }

protected:
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override
    {
        const auto raw = [&](int column) { return sourceModel()->index(row, column, parent).data(RawRole).toString(); };
        return (status.isEmpty() || raw(DiscrepancyModel::Status) == status)
               && (kind.isEmpty() || raw(DiscrepancyModel::Kind) == kind)
               && (sku.isEmpty() || raw(DiscrepancyModel::Sku).contains(sku, Qt::CaseInsensitive));
    }
};

ReconciliationView::ReconciliationView(ConsoleSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_model(new DiscrepancyModel(this))
    , m_trace(new LedgerModel(this))
    , m_filter(new DiscrepancyFilter(this))
{
    auto *layout = new QVBoxLayout(this);
    auto *bar = new QToolBar(this);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_reconcile = bar->addAction(tr("Reconcile &now"));
    m_reconcile->setShortcut(Qt::Key_F5);
    m_reconcile->setToolTip(tr("Run one reconcile pass (F5)"));
    bar->addSeparator();
    m_approve = bar->addAction(tr("&Approve…"));
    // Return and the keypad's Enter alike.
    m_approve->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    m_approve->setToolTip(tr("Approve the proposed correction (Ctrl+Enter)"));
    m_reject = bar->addAction(tr("Re&ject…"));
    m_reject->setShortcut(Qt::CTRL | Qt::Key_Backspace);
    m_reject->setToolTip(tr("Reject: close without changing stock (Ctrl+Backspace)"));
    // The view owns the shortcuts (not only the toolbar), so they work while the table has the focus.
    for (QAction *a : {m_reconcile, m_approve, m_reject}) {
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(a);
    }
    bar->addSeparator();
    bar->addWidget(new QLabel(tr(" Status: "), this));
    m_status = new QComboBox(this);
    m_status->addItem(tr("Pending approval"), u"pending_approval"_s);
    m_status->addItem(tr("All"), QString());
    m_status->addItem(tr("Auto-fixed"), u"auto_fixed"_s);
    m_status->addItem(tr("Approved"), u"approved"_s);
    m_status->addItem(tr("Rejected"), u"rejected"_s);
    bar->addWidget(m_status);
    bar->addWidget(new QLabel(tr("  Kind: "), this));
    m_kind = new QComboBox(this);
    m_kind->addItem(tr("All"), QString());
    for (int k = int(DiscrepancyKind::OrphanPreDeduct); k <= int(DiscrepancyKind::UnrefundedPayment); ++k) {
        m_kind->addItem(DiscrepancyModel::kindText(DiscrepancyKind(k)), discrepancyKindName(DiscrepancyKind(k)));
    }
    bar->addWidget(m_kind);
    bar->addWidget(new QLabel(tr("  SKU: "), this));
    m_sku = new QLineEdit(this);
    m_sku->setPlaceholderText(tr("filter"));
    m_sku->setClearButtonEnabled(true);
    m_sku->setMaximumWidth(180);
    bar->addWidget(m_sku);
    bar->addSeparator();
    layout->addWidget(bar);

    m_banner = new QLabel(this);
    m_banner->setWordWrap(true);
    m_banner->hide();
    layout->addWidget(m_banner);
    m_approvers = new QLabel(this);
    m_approvers->setWordWrap(true);
    m_approvers->setTextFormat(Qt::PlainText);
    layout->addWidget(m_approvers);

    m_filter->setSourceModel(m_model);
    m_filter->status = u"pending_approval"_s;
    m_table = new QTableView(this);
    m_table->setModel(m_filter);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    // The status and the proposal wrap in their capped columns (fitColumns), so every column
    // shows at the default window size.
    m_table->setWordWrap(true);
    // The status (what approving does, who approved first) before the long proposal, so it
    // shows at the default window size.
    m_table->horizontalHeader()->moveSection(DiscrepancyModel::Status, DiscrepancyModel::Proposal);
    bar->addAction(TableExport::install(m_table, u"flashstock-discrepancies"_s));

    m_detail = new QTextBrowser(this);
    m_detail->setOpenLinks(false);
    m_traceView = new QTableView(this);
    m_traceView->setModel(m_trace);
    m_traceView->verticalHeader()->hide();
    m_traceView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_traceView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    TableExport::install(m_traceView, u"flashstock-trace"_s);
    m_traceTitle = new QLabel(this);
    auto *tracePane = new QWidget(this);
    auto *traceLayout = new QVBoxLayout(tracePane);
    traceLayout->setContentsMargins(0, 0, 0, 0);
    traceLayout->addWidget(m_traceTitle);
    traceLayout->addWidget(m_traceView, 1);
    auto *detailSplit = new QSplitter(Qt::Horizontal, this);
    detailSplit->addWidget(m_detail);
    detailSplit->addWidget(tracePane);
    detailSplit->setStretchFactor(0, 2);
    detailSplit->setStretchFactor(1, 3);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(detailSplit);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    const auto refilter = [this] {
        m_filter->status = m_status->currentData().toString();
        m_filter->kind = m_kind->currentData().toString();
        m_filter->sku = m_sku->text().trimmed();
        m_filter->refresh();
        fitColumns();
        updateDetail();
        updateActions();
    };
    connect(m_status, &QComboBox::currentIndexChanged, this, refilter);
    connect(m_kind, &QComboBox::currentIndexChanged, this, refilter);
    connect(m_sku, &QLineEdit::textChanged, this, refilter);
    // The selection, not the current row: a mouse click sets the current row before it
    // selects it.
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        updateDetail();
        updateActions();
    });
    connect(m_reconcile, &QAction::triggered, this, [this] {
        emit message(tr("Reconciling…"));
        m_busy = true;
        updateActions();
        m_session->reconcileNow(30000);
    });
    // Another process (a server's reconcile pass, the CLI) may find discrepancies at any time.
    m_refresh = new QTimer(this);
    m_refresh->setInterval(kRefreshMs);
    connect(m_refresh, &QTimer::timeout, this, &ReconciliationView::refresh);
    connect(m_approve, &QAction::triggered, this, [this] { confirmSelected(true); });
    connect(m_reject, &QAction::triggered, this, [this] { confirmSelected(false); });

    EngineWorker *w = session->worker();
    connect(w, &EngineWorker::opened, this, [this](const ConnectionInfo &info) {
        m_available = info.bookOpen && info.reconcilerAvailable;
        m_banner->setVisible(!info.reconcilerAvailable);
        m_banner->setText(tr("This build has no reconciler yet: discrepancies cannot be listed or approved here."));
        updateActions();
        refresh();
    });
    connect(w, &EngineWorker::discrepanciesListed, this, [this](const QList<Discrepancy> &list) {
        // Keep the operator's filters: stay on the same discrepancy if it is still shown
        // (an approved one leaves the "Pending approval" filter), else on the same row.
        // The list scrolled where the operator left it, too.
        m_listing = false;
        const Discrepancy *current = selected();
        const qint64 keep = current ? current->id : -1;
        const int keepRow = qMax(0, m_table->selectionModel()->selectedRows().value(0).row());
        const int scrolled = m_table->verticalScrollBar()->value();
        const bool newRows = m_model->setDiscrepancies(list);
        const int row = keep < 0 ? -1 : m_model->rowOf(keep);
        const QModelIndex still = row < 0 ? QModelIndex() : m_filter->mapFromSource(m_model->index(row, 0));
        if (still.isValid())
            m_table->selectRow(still.row());
        else if (m_filter->rowCount() > 0)
            m_table->selectRow(qMin(keepRow, m_filter->rowCount() - 1));
        m_table->verticalScrollBar()->setValue(scrolled);
        if (newRows) // the operator's column widths stay while the same rows are listed again
            fitColumns();
        else
            m_table->resizeRowsToContents(); // a status that changed may take another line
        updateDetail();
        updateActions();
    });
    connect(w, &EngineWorker::approversListed, this, [this](const ApproverView &v) {
        m_mayApprove = v.operatorMayApprove;
        m_model->setFourEyesUnits(v.policy.fourEyesUnits);
        const QString who = v.policy.approvers.isEmpty()
            ? tr("Approvers: none yet (set [approval] approvers= in the data dir's flashstock.ini).")
            : tr("Approvers: %1. A correction above %2 units needs two different approvers.")
                  .arg(v.policy.approvers.join(u", "_s))
                  .arg(v.policy.fourEyesUnits);
        const QString you = v.operatorMayApprove
            ? tr("You (%1) may approve and reject.").arg(v.operatorName)
            : tr("You (%1) are not an approver: an approver can add you with "
                 "flashstock-cli approver add %1.").arg(v.operatorName);
        m_approvers->setText(printable(who + u"  "_s + you));
        updateActions();
    });
    connect(w, &EngineWorker::reconciled, this, [this](const QString &summary) {
        m_busy = false; // the listing that follows may not be the first to come back
        updateActions();
        emit message(summary);
    });
    connect(w, &EngineWorker::discrepancyResolved, this, [this](const Discrepancy &d) {
        if (d.awaitsSecondApprover())
            emit message(tr("Discrepancy #%1: your approval is recorded; a correction of %2 units needs a second, "
                            "different approver before it applies")
                             .arg(d.id)
                             .arg(correctionUnits(d)));
        else if (d.status == DiscrepancyStatus::PendingApproval) // a rejection that kept it open
            emit message(tr("Discrepancy #%1 stays pending approval: %2 still disagrees with its ledger and stays "
                            "paused; now proposed: %3")
                             .arg(d.id)
                             .arg(d.sku, d.proposal));
        else
            emit message(
                tr("Discrepancy #%1 %2 by %3").arg(d.id).arg(DiscrepancyModel::statusText(d.status), d.resolvedBy));
    });
    connect(w, &EngineWorker::traceReady, this, [this](qint64 id, const QList<LedgerRow> &rows) {
        if (id == m_tracedId)
            m_trace->setRows(rows, LedgerModel::RowOrder::NewestFirst);
    });
    connect(w, &EngineWorker::failed, this, [this] {
        m_busy = false;
        m_listing = false;
        updateActions();
    });
    updateActions();
}

const Discrepancy *ReconciliationView::selected() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return nullptr;
    return m_model->at(m_filter->mapToSource(rows.first()).row());
}

bool ReconciliationView::select(qint64 id)
{
    const int row = m_model->rowOf(id);
    if (row < 0)
        return false;
    QModelIndex proxy = m_filter->mapFromSource(m_model->index(row, 0));
    if (!proxy.isValid()) {
        setStatusFilter(QString());
        m_kind->setCurrentIndex(0);
        m_sku->clear();
        proxy = m_filter->mapFromSource(m_model->index(row, 0));
    }
    m_table->selectRow(proxy.row());
    m_table->setCurrentIndex(proxy);
    return true;
}

void ReconciliationView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    refresh();
    m_refresh->start();
}

void ReconciliationView::hideEvent(QHideEvent *event)
{
    m_refresh->stop();
    QWidget::hideEvent(event);
}

void ReconciliationView::refresh()
{
    if (!m_available || m_listing)
        return;
    m_listing = true;
    m_session->listDiscrepancies();
}

void ReconciliationView::clear()
{
    m_model->setDiscrepancies({});
    m_available = false;
    m_listing = false;
    updateDetail();
    updateActions();
}

void ReconciliationView::fitColumns()
{
    m_table->resizeColumnsToContents();
    // The status and the proposal are prose: capped, they wrap (full text in the tooltip and
    // the detail pane).
    if (m_table->columnWidth(DiscrepancyModel::Status) > 300)
        m_table->setColumnWidth(DiscrepancyModel::Status, 300);
    if (m_table->columnWidth(DiscrepancyModel::Proposal) > 300)
        m_table->setColumnWidth(DiscrepancyModel::Proposal, 300);
    m_table->resizeRowsToContents();
}

void ReconciliationView::selectFirstPending()
{
    for (int row = 0; row < m_model->rowCount(); ++row) {
        if (m_model->at(row)->status == DiscrepancyStatus::PendingApproval) {
            select(m_model->at(row)->id);
            return;
        }
    }
    if (m_filter->rowCount() > 0)
        m_table->selectRow(0);
}

void ReconciliationView::setStatusFilter(const QString &status)
{
    m_status->setCurrentIndex(qMax(0, m_status->findData(status)));
}

QString ReconciliationView::statusFilter() const
{
    return m_status->currentData().toString();
}

void ReconciliationView::updateActions()
{
    const Discrepancy *d = selected();
    const bool pending = m_available && d && d->status == DiscrepancyStatus::PendingApproval;
    m_approve->setEnabled(pending && m_mayApprove);
    m_reject->setEnabled(pending && m_mayApprove);
    m_reconcile->setEnabled(m_available && !m_busy);
}

void ReconciliationView::updateDetail()
{
    const Discrepancy *d = selected();
    if (!d) {
        m_detailHtml.clear();
        m_detail->setPlainText(m_model->rowCount() ? tr("Select a discrepancy.") : tr("No discrepancies."));
        m_traceTitle->setText(tr("Ledger rows behind the selected discrepancy:"));
        m_tracedId = -1;
        m_trace->setRows({});
        return;
    }
    const auto esc = [](const QString &s) { return s.toHtmlEscaped(); };
    QString html = u"<h3>#%1 %2</h3><table cellspacing=4>"_s.arg(d->id).arg(esc(DiscrepancyModel::kindText(d->kind)));
    const auto row = [&](const QString &k, const QString &v) {
        if (!v.isEmpty())
            html += u"<tr><td><b>%1</b></td><td>%2</td></tr>"_s.arg(esc(k), esc(v));
    };
    row(tr("SKU"), d->bucket >= 0 ? tr("%1, bucket %2").arg(d->sku).arg(d->bucket) : d->sku);
    row(tr("Order"), d->order);
    row(tr("Token"), d->token);
    row(tr("Status"), DiscrepancyModel::statusText(d->status));
    row(tr("Approval"), DiscrepancyModel::approvalText(*d, m_model->fourEyesUnits()));
    row(tr("Detected"), ConsoleText::utcTime(d->detectedAtMs));
    row(tr("Delta"), QString::number(d->delta));
    row(tr("Proposal"), d->proposal);
    row(tr("Found"), d->detail);
    row(tr("Resolved by"), d->resolvers().join(u", "_s));
    row(tr("Resolved at"), d->resolvedAtMs ? ConsoleText::utcTime(d->resolvedAtMs) : QString());
    row(tr("Reason"), d->reason);
    for (const DecisionRecord &r : d->decisions)
        row(r.decision == Decision::Approve ? tr("Approved") : tr("Rejected"),
            tr("%1 by %2 (OS user %3 on %4%5): %6%7")
                .arg(ConsoleText::utcTime(r.atMs), r.operatorName, r.osUser, r.host,
                     r.dbRole.isEmpty() ? QString() : tr(", database role %1").arg(r.dbRole), r.reason,
                     r.applied || r.decision == Decision::Reject
                         ? QString()
                         : tr(" (the first of two approvals: it applied nothing)")));
    html += u"</table>"_s;
    if (html != m_detailHtml) { // unchanged by a refresh: the pane keeps its scroll and selection
        m_detailHtml = html;
        m_detail->setHtml(html);
    }
    m_traceTitle->setText(!d->order.isEmpty() ? tr("Ledger of order %1, newest first:").arg(d->order)
                          : d->bucket >= 0    ? tr("Ledger of %1, bucket %2: its newest rows first:").arg(d->sku).arg(d->bucket)
                                              : tr("Ledger of %1: its newest rows first:").arg(d->sku));
    if (m_tracedId != d->id) {
        m_tracedId = d->id;
        m_trace->setRows({});
        m_session->traceDiscrepancy(*d);
    }
}

ApprovalDialog *ReconciliationView::confirmSelected(bool approve)
{
    const Discrepancy *d = selected();
    if (!d || d->status != DiscrepancyStatus::PendingApproval)
        return nullptr;
    auto *dialog = new ApprovalDialog(*d, approve, m_session->profile().operatorName, m_model->fourEyesUnits(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        emit message(dialog->isApproval() ? tr("Approving #%1…").arg(dialog->discrepancyId())
                                          : tr("Rejecting #%1…").arg(dialog->discrepancyId()));
        m_session->resolveDiscrepancy(dialog->discrepancyId(), dialog->isApproval(), dialog->decidesOn(),
                                      dialog->reason());
    });
    dialog->open();
    return dialog;
}

} // namespace flashstock
