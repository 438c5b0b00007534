#pragma once

#include "ConsoleTypes.h"

#include <QWidget>

class QAction;
class QTableView;

namespace flashstock {

class ConsoleSession;
class LaunchWizard;
class SalesModel;

/// The sales view: the flash sales (SKU, units, window, status, progress, live reserve and
/// reject rates), the launch wizard, and Start / Pause / Stop of the selected sale. Pause is
/// resumed by Start; Stop closes a sale for good, so it asks first. GUI thread.
class SalesView : public QWidget {
    Q_OBJECT
public:
    explicit SalesView(ConsoleSession *session, QWidget *parent = nullptr);

    /// Refreshes the table from a live sample; `rates`: see LiveView::rates().
    void setSnapshot(const LiveSnapshot &snapshot, const QHash<QString, SkuRates> &rates);
    SalesModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    QAction *newSaleAction() const { return m_new; }
    QAction *startAction() const { return m_start; }
    QAction *pauseAction() const { return m_pause; }
    /// Opens the launch wizard (window-modal, does not block the event loop) and returns it.
    LaunchWizard *openWizard();

signals:
    void message(const QString &text);

private:
    const Sale *selected() const;
    void updateActions();

    ConsoleSession *m_session = nullptr;
    SalesModel *m_model = nullptr;
    QTableView *m_table = nullptr;
    QAction *m_new = nullptr;
    QAction *m_start = nullptr;
    QAction *m_pause = nullptr;
    QAction *m_stop = nullptr;
    QStringList m_skus;
    bool m_bookOpen = false;
};

} // namespace flashstock
