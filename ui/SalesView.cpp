#include "SalesView.h"

#include "ConsoleSession.h"
#include "EngineWorker.h"
#include "LaunchWizard.h"
#include "models/SalesModel.h"

#include <QAction>
#include <QHeaderView>
#include <QMessageBox>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

namespace flashstock {

SalesView::SalesView(ConsoleSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_model(new SalesModel(this))
{
    auto *layout = new QVBoxLayout(this);
    auto *bar = new QToolBar(this);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_new = bar->addAction(tr("&New sale…"));
    m_new->setShortcut(QKeySequence::New);
    m_new->setToolTip(tr("Launch a flash sale (Ctrl+N)"));
    bar->addSeparator();
    m_start = bar->addAction(tr("&Start"));
    m_start->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_S);
    m_start->setToolTip(tr("Open the selected sale (Ctrl+Shift+S)"));
    m_pause = bar->addAction(tr("&Pause"));
    m_pause->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_H);
    m_pause->setToolTip(tr("Pause the selected open sale; Start resumes it (Ctrl+Shift+H)"));
    m_stop = bar->addAction(tr("S&top…"));
    m_stop->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_X);
    m_stop->setToolTip(tr("Close the selected sale; it cannot be reopened (Ctrl+Shift+X)"));
    for (QAction *a : {m_start, m_pause, m_stop})
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_new->setShortcutContext(Qt::ApplicationShortcut);
    layout->addWidget(bar);

    m_table = new QTableView(this);
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(m_table, 1);

    connect(m_new, &QAction::triggered, this, [this] { openWizard(); });
    connect(m_start, &QAction::triggered, this, [this] {
        if (const Sale *s = selected())
            m_session->setSaleStatus(s->id, SaleStatus::Open);
    });
    connect(m_pause, &QAction::triggered, this, [this] {
        if (const Sale *s = selected())
            m_session->setSaleStatus(s->id, SaleStatus::Paused);
    });
    connect(m_stop, &QAction::triggered, this, [this] {
        const Sale *s = selected();
        if (!s)
            return;
        const qint64 id = s->id;
        auto *box = new QMessageBox(QMessageBox::Warning, tr("Stop sale #%1").arg(id),
                                    tr("Stop the sale of %1? Reserves are refused from now on, and a stopped sale "
                                       "cannot be reopened (launch a new one instead).")
                                        .arg(s->sku),
                                    QMessageBox::Cancel, this);
        box->addButton(tr("Stop the sale"), QMessageBox::AcceptRole);
        box->setAttribute(Qt::WA_DeleteOnClose);
        connect(box, &QMessageBox::accepted, this, [this, id] { m_session->setSaleStatus(id, SaleStatus::Stopped); });
        box->open();
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SalesView::updateActions);
    connect(m_model, &QAbstractItemModel::modelReset, this, &SalesView::updateActions);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &SalesView::updateActions);

    EngineWorker *w = session->worker();
    connect(w, &EngineWorker::opened, this, [this](const ConnectionInfo &info) {
        m_bookOpen = info.bookOpen;
        updateActions();
    });
    connect(w, &EngineWorker::saleLaunched, this, [this](const Sale &s) {
        emit message(tr("Sale #%1 of %2 created (%3)").arg(s.id).arg(s.sku, saleStatusName(s.status)));
        m_session->sample();
    });
    connect(w, &EngineWorker::saleChanged, this, [this](const Sale &s) {
        emit message(tr("Sale #%1 of %2 is now %3").arg(s.id).arg(s.sku, saleStatusName(s.status)));
        m_session->sample();
    });
    updateActions();
}

void SalesView::setSnapshot(const LiveSnapshot &snapshot, const QHash<QString, SkuRates> &rates)
{
    if (!snapshot.health.bookUp)
        return;
    m_skus.clear();
    for (const SkuSample &s : snapshot.skus)
        m_skus << s.sku;
    m_model->setSales(snapshot.sales, snapshot.skus, rates);
}

LaunchWizard *SalesView::openWizard()
{
    if (!m_bookOpen)
        return nullptr;
    auto *wizard = new LaunchWizard(m_session, m_skus, this);
    wizard->setAttribute(Qt::WA_DeleteOnClose);
    wizard->open();
    return wizard;
}

const Sale *SalesView::selected() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? nullptr : m_model->saleAt(rows.first().row());
}

void SalesView::updateActions()
{
    const Sale *s = selected();
    m_new->setEnabled(m_bookOpen);
    m_start->setEnabled(m_bookOpen && s && (s->status == SaleStatus::Scheduled || s->status == SaleStatus::Paused));
    m_pause->setEnabled(m_bookOpen && s && s->status == SaleStatus::Open);
    m_stop->setEnabled(m_bookOpen && s && s->status != SaleStatus::Stopped);
}

} // namespace flashstock
