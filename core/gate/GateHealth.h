#pragma once

#include <QList>
#include <QString>

namespace flashstock {

/// What Gate::health() found on one Redis node (the console's status bar shows one per node).
struct GateNodeHealth {
    /// The node's part in the gate.
    enum class Role {
        Single,  ///< the one server of a `redis://` or `unix://` gate
        Master,  ///< a cluster master: serves the SKUs of its slots
        Replica, ///< a cluster replica: takes over when its master fails
    };

    QString address;            ///< host:port, or the socket path
    Role role = Role::Single;
    bool reachable = false;     ///< answered PING
    bool scriptsLoaded = false; ///< every script of lua/ is in its script cache (not asked of replicas)
    qint64 roundTripUs = 0;     ///< one PING, microseconds
    int slotCount = 0;          ///< masters: hash slots it owns (of 16384)
    QString detail;             ///< why not healthy, for people; empty when healthy
};

/// Lower-case name of a node role ("single", "master", "replica").
QString gateNodeRoleName(GateNodeHealth::Role role);

/// What Gate::health() found, over all nodes.
struct GateHealth {
    bool reachable = false;     ///< every node that serves SKUs answered (a cluster: every master, and the slot map is known)
    bool scriptsLoaded = false; ///< every script of lua/ is in the script cache of every node that serves SKUs
    qint64 roundTripUs = 0;     ///< the slowest PING of those nodes, microseconds
    QString detail;             ///< why not healthy, for people
    QList<GateNodeHealth> nodes; ///< per node: the one server, or every master then every replica
};

} // namespace flashstock
