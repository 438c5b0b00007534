#pragma once

#include "ConsoleTypes.h"

#include <QMainWindow>
#include <QMap>
#include <QSet>

#include <optional>

class QAction;
class QDialog;
class QLabel;
class QMenu;
class QMessageBox;
class QTabWidget;
class QTimer;
class QToolButton;

namespace flashstock {

class ConsoleSession;
class DrillView;
class GateNodesStatus;
class LedgerView;
class LiveView;
class ReadmeDialog;
class ReconciliationView;
class SalesView;
class ServerMonitor;
class ServersView;
class SkuView;
class WarningModel;

/// The operations console's main window: Live, Sales, SKUs, Reconciliation, Ledger, Drill
/// and Servers tabs over one ConsoleSession, a 1 s sample timer, the console's own expirer
/// (every 5 s while the Live view's switch is on), a status bar with the health and
/// round-trip latency of the gate and the book, the servers working on the book (a stopped
/// one named in red; a click opens the Servers tab) and the engine's warnings (a count that
/// opens their list), a banner above every tab that announces a new discrepancy pausing a
/// SKU, and Help (the built-in README's sections, About). Either tier may be down: the
/// window says so and keeps what still works. A connection that fails leaves no stale
/// figure and no saved profile behind. The Live split is kept in the data dir's settings.
/// GUI thread.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum Tab { LiveTab, SalesTab, SkusTab, ReconciliationTab, LedgerTab, DrillTab, ServersTab };

    /// Opens `profile` in the background; the window shows at once.
    explicit MainWindow(const EngineProfile &profile, QWidget *parent = nullptr);
    ~MainWindow() override;

    ConsoleSession *session() const { return m_session; }
    LiveView *liveView() const { return m_live; }
    SalesView *salesView() const { return m_sales; }
    SkuView *skuView() const { return m_skus; }
    ReconciliationView *reconciliationView() const { return m_reconciliation; }
    LedgerView *ledgerView() const { return m_ledger; }
    DrillView *drillView() const { return m_drill; }
    ServersView *serversView() const { return m_serversView; }
    /// The servers working on the book (give it the read token for their /metrics).
    ServerMonitor *serverMonitor() const { return m_serverMonitor; }
    /// Text of the servers indicator, empty when no server works on the book (for tests).
    QString serverStatusText() const;
    /// The banner announcing new discrepancies that pause a SKU: its text, empty while hidden
    /// (for tests).
    QString pauseBannerText() const;
    QTabWidget *tabs() const { return m_tabs; }
    QMenu *helpMenu() const { return m_help; }
    /// Text of the gate and book health labels (for tests).
    QString gateStatusText() const;
    QString bookStatusText() const;
    /// The status bar's node health of a cluster gate (hidden otherwise).
    GateNodesStatus *gateNodesStatus() const { return m_gateNodes; }
    /// The engine's recent warnings, as the status bar counts them and their list shows them.
    WarningModel *warningModel() const { return m_warningModel; }
    /// Text of the warnings indicator (for tests).
    QString warningStatusText() const;
    /// Shows the list of recent warnings (the indicator's click): newest first, with how many
    /// older ones were dropped and a Clear button. One dialog, raised if open.
    QDialog *showWarnings();
    /// Help > README section `heading`: the built-in README, opened there. One dialog.
    ReadmeDialog *showReadme(const QString &heading);
    /// Help > About (non-blocking); returns the box.
    QMessageBox *showAbout();
    /// Reopens the session on `profile`; `saveOnSuccess`: save it (File > Connection...) once
    /// its book opens, never before.
    void reopen(const EngineProfile &profile, bool saveOnSuccess);

    /// Screenshot mode: once data has arrived (a few samples), saves each tab as PNG into
    /// `dir` (live.png, sales.png, skus.png, sku-restock.png, reconciliation.png, ledger.png,
    /// servers.png, drill.png, launch-wizard.png), then emits screenshotsDone().
    void takeScreenshots(const QString &dir, int samples = 15);

signals:
    void screenshotsDone(bool ok);

protected:
    /// Keeps the layout (the Live split) for the next start.
    void closeEvent(QCloseEvent *event) override;

private slots:
    void showStatusMessage(const QString &text);
    /// File > Connection...: edit, then reopen the session (saved, without passwords, once it opens).
    void editConnection();

private:
    void buildMenus();
    void onOpened(const ConnectionInfo &info);
    void onSampled(const LiveSnapshot &snapshot);
    void onFailed(const QString &what, const QString &message);
    void shootNow();
    /// The screenshots after the drill's (shootNow runs a scratch drill first).
    void shootRest();
    void saveShot(QWidget *widget, const QString &name);
    void updateWarningStatus();
    void updateServerStatus();
    void clearViews(const QString &why);
    /// Announces the discrepancies that pause a SKU in `snapshot` and did not in the one
    /// before (the first sample after connecting only learns them), and hides those no
    /// longer pausing.
    void announcePauses(const LiveSnapshot &snapshot);
    void showPauseBanner();
    void saveLayout();

    ConsoleSession *m_session = nullptr;
    QTabWidget *m_tabs = nullptr;
    LiveView *m_live = nullptr;
    SalesView *m_sales = nullptr;
    SkuView *m_skus = nullptr;
    ReconciliationView *m_reconciliation = nullptr;
    LedgerView *m_ledger = nullptr;
    DrillView *m_drill = nullptr;
    QMenu *m_help = nullptr;
    QLabel *m_gateStatus = nullptr;
    GateNodesStatus *m_gateNodes = nullptr; ///< a cluster gate's nodes; hidden otherwise
    QLabel *m_bookStatus = nullptr;
    QLabel *m_where = nullptr;
    WarningModel *m_warningModel = nullptr;
    QToolButton *m_warningStatus = nullptr;
    ServerMonitor *m_serverMonitor = nullptr;
    ServersView *m_serversView = nullptr;
    QToolButton *m_serverStatus = nullptr;
    QWidget *m_pauseBanner = nullptr;
    QLabel *m_pauseText = nullptr;
    QSet<qint64> m_pausing;              ///< discrepancies pausing a SKU at the last sample
    bool m_pausingKnown = false;         ///< m_pausing is from this connection
    QMap<qint64, QString> m_announced;   ///< shown on the banner: id -> what it says
    qint64 m_selectWhenListed = -1;      ///< the banner's discrepancy, selected once listed
    QString m_layoutDir;                 ///< the data dir whose settings keep the layout
    QDialog *m_warningsDialog = nullptr;
    ReadmeDialog *m_readme = nullptr;
    QTimer *m_sampleTimer = nullptr;
    QTimer *m_expiryTimer = nullptr;
    std::optional<EngineProfile> m_saveOnOpen; ///< File > Connection...: saved once its book opens
    bool m_connected = false; ///< the session's book is open; samples from before are ignored
    QString m_screenshotDir;
    int m_samplesBeforeShots = 0;
    int m_samplesSeen = 0;
    bool m_shotsOk = true;
    bool m_liveSkuChosen = false;
    bool m_quiet = false; ///< screenshot mode: no dialogs
};

} // namespace flashstock
