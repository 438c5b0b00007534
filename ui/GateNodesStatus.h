#pragma once

#include "gate/GateHealth.h"

#include <QLabel>
#include <QList>

namespace flashstock {

/// The status bar's health of each node of a Redis Cluster gate: one dot per node (masters,
/// then replicas), green when it answers, amber for a master without the gate's scripts,
/// red when it does not answer, with the count (`Nodes: 3/3 masters, 2/3 replicas up`); the
/// tooltip names every node (address, role, slots, round trip, what is wrong). Hidden for a
/// gate of one server, or none, where the gate's own badge says it all. GUI thread.
class GateNodesStatus : public QLabel {
    Q_OBJECT

public:
    explicit GateNodesStatus(QWidget *parent = nullptr);

    /// Shows `nodes` (Gate::health()'s, in its order); fewer than two nodes hides the widget.
    void setNodes(const QList<GateNodeHealth> &nodes);
    /// The line as people read it, without markup (for tests): `Nodes: 3/3 masters, 2/3 replicas up`.
    QString summary() const { return m_summary; }

private:
    QString m_summary;
};

} // namespace flashstock
