#include "SkuView.h"

#include "ConsoleSession.h"
#include "EngineWorker.h"
#include "SkuDialogs.h"
#include "TableExport.h"
#include "models/BucketLevelsModel.h"
#include "models/ModelRoles.h"
#include "models/SkuLevelsModel.h"

#include <QAction>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace flashstock {

SkuView::SkuView(ConsoleSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_model(new SkuLevelsModel(this))
    , m_filter(new QSortFilterProxyModel(this))
    , m_buckets(new BucketLevelsModel(this))
{
    auto *layout = new QVBoxLayout(this);
    auto *bar = new QToolBar(this);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_add = bar->addAction(tr("&Add SKU…"));
    m_add->setToolTip(tr("Create a SKU with its initial stock (ledgered)"));
    bar->addSeparator();
    m_restock = bar->addAction(tr("&Restock…"));
    m_restock->setToolTip(tr("Add available units to the selected SKU, with a reason (ledgered)"));
    m_bucketsAction = bar->addAction(tr("&Buckets…"));
    m_bucketsAction->setToolTip(tr("Split the selected SKU's stock over more or fewer rows of the book (ledgered)"));
    m_rebalance = bar->addAction(tr("Re&balance…"));
    m_rebalance->setToolTip(tr("Move available units between two buckets of the selected SKU (ledgered)"));
    for (QAction *a : {m_add, m_restock, m_bucketsAction, m_rebalance}) {
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(a);
    }
    bar->addSeparator();
    auto *filterLabel = new QLabel(tr(" &Filter: "), this);
    bar->addWidget(filterLabel);
    m_filterText = new QLineEdit(this);
    m_filterText->setPlaceholderText(tr("part of a SKU id"));
    m_filterText->setClearButtonEnabled(true);
    m_filterText->setMaximumWidth(240);
    filterLabel->setBuddy(m_filterText);
    bar->addWidget(m_filterText);
    layout->addWidget(bar);

    m_filter->setSourceModel(m_model);
    m_filter->setFilterKeyColumn(SkuLevelsModel::Sku);
    m_filter->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setSortRole(RawRole);
    m_table = new QTableView(this);
    m_table->setModel(m_filter);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(SkuLevelsModel::Sku, Qt::AscendingOrder);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // The rates live in the Live view; here the stock and its rows.
    m_table->setColumnHidden(SkuLevelsModel::TakenRate, true);
    m_table->setColumnHidden(SkuLevelsModel::RefusedRate, true);
    TableExport::install(m_table, u"flashstock-skus"_s);

    m_bucketTable = new QTableView(this);
    m_bucketTable->setModel(m_buckets);
    m_bucketTable->verticalHeader()->hide();
    m_bucketTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_bucketTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto *bucketBox = new QWidget(this);
    auto *bucketLayout = new QVBoxLayout(bucketBox);
    bucketLayout->setContentsMargins(0, 0, 0, 0);
    bucketLayout->addWidget(new QLabel(tr("Buckets of the selected SKU (rows of the book):"), bucketBox));
    bucketLayout->addWidget(m_bucketTable, 1);

    // The buckets below the SKUs: the SKU table keeps the view's whole width for its columns.
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(bucketBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    connect(m_filterText, &QLineEdit::textChanged, this, [this](const QString &text) {
        m_filter->setFilterFixedString(text.trimmed());
        updateSelection();
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SkuView::updateSelection);
    connect(m_model, &QAbstractItemModel::modelReset, this, &SkuView::updateSelection);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &SkuView::updateSelection);
    for (QAction *a : {m_add, m_restock, m_bucketsAction, m_rebalance})
        connect(a, &QAction::triggered, this, [this, a] { openDialog(a); });

    EngineWorker *w = session->worker();
    connect(w, &EngineWorker::opened, this, [this](const ConnectionInfo &info) {
        m_bookOpen = info.bookOpen;
        updateSelection();
    });
    connect(w, &EngineWorker::skuChanged, this, [this](const SkuChange &, const QString &summary) {
        emit message(summary);
        m_session->sample();
    });
    updateSelection();
}

void SkuView::setSnapshot(const LiveSnapshot &snapshot)
{
    if (!snapshot.health.bookUp)
        return;
    const QString keep = selected() ? selected()->sku : QString();
    m_model->setSamples(snapshot.skus, {}, snapshot.expiry ? snapshot.expiry->nowMs : snapshot.atMs);
    if (!keep.isEmpty() && (!selected() || selected()->sku != keep))
        select(keep);
    updateSelection();
}

void SkuView::clear()
{
    m_model->setSamples({});
    updateSelection();
}

bool SkuView::select(const QString &sku)
{
    const int row = m_model->rowOf(sku);
    if (row < 0)
        return false;
    QModelIndex proxy = m_filter->mapFromSource(m_model->index(row, 0));
    if (!proxy.isValid()) {
        m_filterText->clear();
        proxy = m_filter->mapFromSource(m_model->index(row, 0));
    }
    m_table->selectRow(proxy.row());
    return true;
}

const SkuSample *SkuView::selected() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return nullptr;
    const int row = m_filter->mapToSource(rows.first()).row();
    return row >= 0 && row < m_model->samples().size() ? &m_model->samples().at(row) : nullptr;
}

void SkuView::updateSelection()
{
    const SkuSample *s = selected();
    m_add->setEnabled(m_bookOpen);
    m_restock->setEnabled(m_bookOpen && s);
    m_bucketsAction->setEnabled(m_bookOpen && s);
    m_rebalance->setEnabled(m_bookOpen && s && s->bucketLevels.size() > 1);
    m_buckets->setBuckets(s ? s->bucketLevels : QList<BucketLevels>{});
}

SkuChangeDialog *SkuView::openDialog(QAction *action)
{
    const SkuSample *s = selected();
    const QString op = m_session->profile().operatorName;
    SkuChangeDialog *dialog = nullptr;
    if (action == m_add) {
        QStringList existing;
        for (const SkuSample &x : m_model->samples())
            existing << x.sku;
        dialog = new AddSkuDialog(existing, op, this);
    } else if (!s) {
        return nullptr;
    } else if (action == m_restock) {
        dialog = new RestockDialog(*s, op, this);
    } else if (action == m_bucketsAction) {
        dialog = new BucketsDialog(*s, op, this);
    } else if (action == m_rebalance) {
        dialog = new RebalanceDialog(*s, op, this);
    } else {
        return nullptr;
    }
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        const SkuChange change = dialog->change();
        emit message(tr("Sending: %1…").arg(dialog->windowTitle()));
        m_session->changeSku(change);
    });
    dialog->open();
    return dialog;
}

} // namespace flashstock
