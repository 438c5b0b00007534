#pragma once

#include "ConsoleTypes.h"

#include <QMainWindow>

class QLabel;
class QTabWidget;
class QTimer;

namespace flashstock {

class ConsoleSession;
class DrillView;
class LedgerView;
class LiveView;
class ReconciliationView;
class SalesView;

/// The operations console's main window: Live, Sales, Reconciliation, Ledger and Drill tabs over one
/// ConsoleSession, a 1 s sample timer, and a status bar with the health and round-trip
/// latency of the gate and the book. Either tier may be down: the window says so and keeps
/// what still works. GUI thread.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum Tab { LiveTab, SalesTab, ReconciliationTab, LedgerTab, DrillTab };

    /// Opens `profile` in the background; the window shows at once.
    explicit MainWindow(const ConnectionProfile &profile, QWidget *parent = nullptr);
    ~MainWindow() override;

    ConsoleSession *session() const { return m_session; }
    LiveView *liveView() const { return m_live; }
    SalesView *salesView() const { return m_sales; }
    ReconciliationView *reconciliationView() const { return m_reconciliation; }
    LedgerView *ledgerView() const { return m_ledger; }
    DrillView *drillView() const { return m_drill; }
    QTabWidget *tabs() const { return m_tabs; }
    /// Text of the gate and book health labels (for tests).
    QString gateStatusText() const;
    QString bookStatusText() const;

    /// Screenshot mode: once data has arrived (a few samples), saves each tab as PNG into
    /// `dir` (live.png, sales.png, reconciliation.png, ledger.png, launch-wizard.png), then
    /// emits screenshotsDone().
    void takeScreenshots(const QString &dir, int samples = 15);

signals:
    void screenshotsDone(bool ok);

private slots:
    void showStatusMessage(const QString &text);
    /// File > Connection...: edit, save (without passwords) and reopen the session.
    void editConnection();

private:
    void onOpened(const ConnectionInfo &info);
    void onSampled(const LiveSnapshot &snapshot);
    void onFailed(const QString &what, const QString &message);
    void shootNow();
    void reopen(const ConnectionProfile &profile);
    void saveShot(QWidget *widget, const QString &name);

    ConsoleSession *m_session = nullptr;
    QTabWidget *m_tabs = nullptr;
    LiveView *m_live = nullptr;
    SalesView *m_sales = nullptr;
    ReconciliationView *m_reconciliation = nullptr;
    LedgerView *m_ledger = nullptr;
    DrillView *m_drill = nullptr;
    QLabel *m_gateStatus = nullptr;
    QLabel *m_bookStatus = nullptr;
    QLabel *m_where = nullptr;
    QTimer *m_sampleTimer = nullptr;
    QString m_screenshotDir;
    int m_samplesBeforeShots = 0;
    int m_samplesSeen = 0;
    bool m_shotsOk = true;
    bool m_liveSkuChosen = false;
    bool m_quiet = false; ///< screenshot mode: no dialogs
};

} // namespace flashstock
