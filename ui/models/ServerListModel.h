#pragma once

#include "ServerMonitor.h"

#include <QAbstractTableModel>

namespace flashstock {

/// The servers working on the book (ServerMonitor::servers()), newest heartbeat first: host,
/// process, address, state (a stopped one in red with the time of its last heartbeat), last
/// heartbeat, readiness, request and error rates, and what is missing and why. GUI thread;
/// fed by setServers(). RawRole gives the state's word (`up`, `late`, `stopped`,
/// `replaced`), ms since the epoch and rates per second (-1: unknown).
class ServerListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Host, Process, Address, State, LastHeartbeat, Ready, Requests, Errors, Note, ColumnCount };

    explicit ServerListModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Shows `servers`; the same servers in the same order keep the rows (and the selection).
    void setServers(const QList<ServerStatus> &servers);
    /// The server on `row`, or nullptr.
    const ServerStatus *at(int row) const;
    /// Row of server `id` (`server@HOST:PID`), or -1.
    int rowOf(const QString &id) const;

    /// `up`, `late`, `stopped`, `replaced`.
    static QString stateName(ServerStatus::State state);
    /// The state for people: `up`, `STOPPED at 2026-12-03 10:02:03 UTC`, ...
    static QString stateText(const ServerStatus &server);

private:
    QList<ServerStatus> m_rows;
};

} // namespace flashstock
