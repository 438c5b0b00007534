#pragma once

#include "ConsoleTypes.h"

#include <QWidget>

#include <functional>

class QAction;
class QMessageBox;
class QTableView;

namespace flashstock {

class ConsoleSession;
class LaunchWizard;
class SalesModel;

/// The sales view: the flash sales (SKU, units, window in UTC, status, progress, live
/// reserve and reject rates), the launch wizard, Start / Pause / Stop of the selected sale,
/// and its gate controls: book-only on and off, and rebuilding its SKU's gate from the book.
/// Pause is resumed by Start. Stop, book-only and rebuild ask first, naming the sale and
/// what will happen. The shortcuts work wherever the focus is inside the view. GUI thread.
class SalesView : public QWidget {
    Q_OBJECT
public:
    explicit SalesView(ConsoleSession *session, QWidget *parent = nullptr);

    /// Refreshes the table from a live sample; `rates`: see LiveView::rates().
    void setSnapshot(const LiveSnapshot &snapshot, const QHash<QString, SkuRates> &rates);
    /// Forgets the sales shown (a new connection).
    void clear();
    SalesModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    QAction *newSaleAction() const { return m_new; }
    QAction *startAction() const { return m_start; }
    QAction *pauseAction() const { return m_pause; }
    QAction *stopAction() const { return m_stop; }
    QAction *bookOnlyAction() const { return m_bookOnly; }
    QAction *rebuildGateAction() const { return m_rebuild; }
    /// Opens the launch wizard (window-modal, does not block the event loop) and returns it.
    LaunchWizard *openWizard();
    /// The confirmation open now (Stop, book-only, rebuild), or nullptr (for tests).
    QMessageBox *pendingConfirmation() const { return m_confirmation; }

signals:
    void message(const QString &text);

private:
    const Sale *selected() const;
    void updateActions();
    /// Asks `question` (window-modal, not blocking the event loop); `yes` names the action.
    void confirm(const QString &title, const QString &question, const QString &yes, std::function<void()> then);

    ConsoleSession *m_session = nullptr;
    SalesModel *m_model = nullptr;
    QTableView *m_table = nullptr;
    QAction *m_new = nullptr;
    QAction *m_start = nullptr;
    QAction *m_pause = nullptr;
    QAction *m_stop = nullptr;
    QAction *m_bookOnly = nullptr;
    QAction *m_rebuild = nullptr;
    QMessageBox *m_confirmation = nullptr;
    QList<SkuSample> m_skus;
    bool m_bookOpen = false;
    bool m_gateConfigured = false;
};

} // namespace flashstock
