#pragma once

#include <QWidget>

class QLabel;
class QTableView;

namespace flashstock {

class ServerListModel;
class ServerMonitor;

/// The servers view: every flashstock-server working on the book (ServerMonitor), with its
/// host, last heartbeat, readiness and rates, a stopped one in red, and a line that says
/// where the figures come from and why rates are missing. Copy and CSV export. GUI thread.
class ServersView : public QWidget {
    Q_OBJECT
public:
    /// `monitor` stays the caller's.
    explicit ServersView(ServerMonitor *monitor, QWidget *parent = nullptr);

    ServerListModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    /// The line above the table (for tests).
    QString introText() const;

    /// The status bar's line for the monitor's servers, without markup: empty when there is
    /// none; `Servers: 2 up`; `Server HOST:PORT STOPPED at TIME` (the stopped ones named,
    /// newest first). `alarm` is set when one is stopped, `warn` when one is late or not ready.
    static QString statusLine(const ServerMonitor &monitor, bool *alarm = nullptr, bool *warn = nullptr);

private:
    void refresh();

    ServerMonitor *m_monitor = nullptr;
    ServerListModel *m_model = nullptr;
    QLabel *m_intro = nullptr;
    QTableView *m_table = nullptr;
};

} // namespace flashstock
