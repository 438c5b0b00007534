#include "SalesView.h"

#include "ConsoleSession.h"
#include "EngineWorker.h"
#include "LaunchWizard.h"
#include "models/SalesModel.h"

#include <QAction>
#include <QHeaderView>
#include <QMessageBox>
#include <QPushButton>
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
    bar->addSeparator();
    m_bookOnly = bar->addAction(tr("&Book-only on…"));
    m_bookOnly->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_B);
    m_bookOnly->setToolTip(tr("While the gate is down: reserves of the selected sale skip the gate and go straight "
                              "to the book (slower, exact); off rebuilds the gate first (Ctrl+Shift+B)"));
    m_rebuild = bar->addAction(tr("&Rebuild gate…"));
    m_rebuild->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_R);
    m_rebuild->setToolTip(tr("Reload the selected sale's SKU in the gate from the book of record (Ctrl+Shift+R)"));
    // The view owns the shortcuts, so they work while its table has the focus.
    for (QAction *a : {m_start, m_pause, m_stop, m_bookOnly, m_rebuild}) {
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(a);
    }
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
        confirm(tr("Stop sale #%1").arg(id),
                tr("Stop sale #%1 of %2? Reserves are refused from now on, and a stopped sale cannot be reopened "
                   "(launch a new one instead).")
                    .arg(id)
                    .arg(s->sku),
                tr("Stop the sale"), [this, id] { m_session->setSaleStatus(id, SaleStatus::Stopped); });
    });
    connect(m_bookOnly, &QAction::triggered, this, [this] {
        const Sale *s = selected();
        if (!s)
            return;
        const qint64 id = s->id;
        if (!s->bookOnly)
            confirm(tr("Book-only for sale #%1").arg(id),
                    tr("Switch sale #%1 of %2 to book-only? Its reserves then skip the gate and go straight to the "
                       "book's guarded update: slower, still exact. Use it while the gate is down; switching back "
                       "rebuilds the gate from the book.")
                        .arg(id)
                        .arg(s->sku),
                    tr("Switch to book-only"), [this, id] { m_session->setSaleBookOnly(id, true); });
        else
            confirm(tr("Back to the gate for sale #%1").arg(id),
                    tr("Switch sale #%1 of %2 back to the gate? The gate of %2 is rebuilt from the book first "
                       "(its reserves answer paused for the moment that takes); the gate must be up.")
                        .arg(id)
                        .arg(s->sku),
                    tr("Back to the gate"), [this, id] { m_session->setSaleBookOnly(id, false); });
    });
    connect(m_rebuild, &QAction::triggered, this, [this] {
        const Sale *s = selected();
        if (!s)
            return;
        const QString sku = s->sku;
        confirm(tr("Rebuild the gate of %1").arg(sku),
                tr("Rebuild the gate of %1 from the book of record? The gate's stock, sale, pause and per-user units "
                   "of %1 are set from the book (net of reserves still on their way); its reserves answer paused for the "
                   "moment that takes.")
                    .arg(sku),
                tr("Rebuild the gate"), [this, sku] { m_session->rebuildGate(sku); });
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SalesView::updateActions);
    connect(m_model, &QAbstractItemModel::modelReset, this, &SalesView::updateActions);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &SalesView::updateActions);

    EngineWorker *w = session->worker();
    connect(w, &EngineWorker::opened, this, [this](const ConnectionInfo &info) {
        m_bookOpen = info.bookOpen;
        m_gateConfigured = info.gateConfigured;
        updateActions();
    });
    connect(w, &EngineWorker::saleLaunched, this, [this](const Sale &s) {
        emit message(tr("Sale #%1 of %2 created (%3)").arg(s.id).arg(s.sku, saleStatusName(s.status)));
        m_session->sample();
    });
    connect(w, &EngineWorker::saleChanged, this, [this](const Sale &s) {
        emit message(s.bookOnly ? tr("Sale #%1 of %2 is now %3, book-only").arg(s.id).arg(s.sku, saleStatusName(s.status))
                                : tr("Sale #%1 of %2 is now %3").arg(s.id).arg(s.sku, saleStatusName(s.status)));
        m_session->sample();
    });
    connect(w, &EngineWorker::gateRebuilt, this, [this](const QString &sku, qint64 available) {
        emit message(tr("Gate of %1 rebuilt from the book: %L2 available").arg(sku).arg(available));
        m_session->sample();
    });
    updateActions();
}

void SalesView::confirm(const QString &title, const QString &question, const QString &yes, std::function<void()> then)
{
    auto *box = new QMessageBox(QMessageBox::Warning, title, question, QMessageBox::Cancel, this);
    QPushButton *go = box->addButton(yes, QMessageBox::AcceptRole);
    box->setDefaultButton(qobject_cast<QPushButton *>(box->button(QMessageBox::Cancel)));
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this, [go, then](QAbstractButton *clicked) {
        if (clicked == go)
            then();
    });
    connect(box, &QObject::destroyed, this, [this, box] {
        if (m_confirmation == box)
            m_confirmation = nullptr;
    });
    m_confirmation = box;
    box->open();
}

void SalesView::setSnapshot(const LiveSnapshot &snapshot, const QHash<QString, SkuRates> &rates)
{
    if (!snapshot.health.bookUp)
        return;
    m_skus = snapshot.skus;
    m_model->setSales(snapshot.sales, snapshot.skus, rates, snapshot.expiry ? snapshot.expiry->nowMs : snapshot.atMs);
}

void SalesView::clear()
{
    m_skus.clear();
    m_model->setSales({}, {}, {});
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
    const bool live = m_bookOpen && s && s->status != SaleStatus::Stopped;
    m_new->setEnabled(m_bookOpen);
    m_start->setEnabled(m_bookOpen && s && (s->status == SaleStatus::Scheduled || s->status == SaleStatus::Paused));
    m_pause->setEnabled(m_bookOpen && s && s->status == SaleStatus::Open);
    m_stop->setEnabled(live);
    m_bookOnly->setEnabled(live && (m_gateConfigured || (s && s->bookOnly)));
    m_bookOnly->setText(s && s->bookOnly ? tr("&Book-only off…") : tr("&Book-only on…"));
    m_rebuild->setEnabled(m_bookOpen && s && m_gateConfigured);
}

} // namespace flashstock
