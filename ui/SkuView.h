#pragma once

#include "ConsoleTypes.h"

#include <QWidget>

class QAction;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace flashstock {

class BucketLevelsModel;
class ConsoleSession;
class SkuChangeDialog;
class SkuLevelsModel;

/// The SKUs view: every SKU with its book and gate levels, buckets and sale, filtered by a
/// text, the buckets of the selected one, and Add SKU, Restock, Buckets and Rebalance
/// through dialogs that say what will change (ledgered in the operator's name). Requests go
/// through the ConsoleSession; answers come as EngineWorker::skuChanged or failed. GUI thread.
class SkuView : public QWidget {
    Q_OBJECT
public:
    explicit SkuView(ConsoleSession *session, QWidget *parent = nullptr);

    /// Refreshes the list from a live sample.
    void setSnapshot(const LiveSnapshot &snapshot);
    /// Forgets the SKUs shown (a new connection).
    void clear();
    SkuLevelsModel *model() const { return m_model; }
    QSortFilterProxyModel *filtered() const { return m_filter; }
    BucketLevelsModel *bucketModel() const { return m_buckets; }
    QTableView *table() const { return m_table; }
    QLineEdit *filterField() const { return m_filterText; }
    QAction *addSkuAction() const { return m_add; }
    QAction *restockAction() const { return m_restock; }
    QAction *bucketsAction() const { return m_bucketsAction; }
    QAction *rebalanceAction() const { return m_rebalance; }
    /// Selects `sku` (clearing a filter that hides it). False if unknown.
    bool select(const QString &sku);
    /// Opens the dialog of `action` for the selected SKU (Add needs none), window-modal
    /// without blocking the event loop; on accept its change goes to the session. Returns it,
    /// or nullptr if it needs a SKU and none is selected.
    SkuChangeDialog *openDialog(QAction *action);

signals:
    void message(const QString &text);

private:
    const SkuSample *selected() const;
    void updateSelection();

    ConsoleSession *m_session = nullptr;
    SkuLevelsModel *m_model = nullptr;
    QSortFilterProxyModel *m_filter = nullptr;
    BucketLevelsModel *m_buckets = nullptr;
    QTableView *m_table = nullptr;
    QTableView *m_bucketTable = nullptr;
    QLineEdit *m_filterText = nullptr;
    QAction *m_add = nullptr;
    QAction *m_restock = nullptr;
    QAction *m_bucketsAction = nullptr;
    QAction *m_rebalance = nullptr;
    bool m_bookOpen = false;
};

} // namespace flashstock
