#pragma once

#include "gate/RedisUrl.h"
#include "support/RedisFixture.h"

#include <QStringList>

#include <functional>
#include <memory>
#include <vector>

namespace flashstock {

/// A throwaway Redis Cluster on loopback for one test executable: `masters` masters with
/// `replicasPerMaster` replicas each (RedisFixture nodes: data ports below 55535, bus port
/// +10000), created by `redis-cli --cluster create ... --cluster-yes` and ready once every
/// node says cluster_state:ok and agrees on the slot owners, every node knows every other in
/// its role (CLUSTER NODES), and every replica is in sync
/// with its master. Nodes keep their nodes.conf
/// in their own dir, so a killed node restarted rejoins. `cluster-node-timeout` is small
/// for a quick failover, and `cluster-require-full-coverage no` lets the masters that are
/// up keep serving their slots while one is down (what the gate expects of a production
/// cluster too); `repl-diskless-sync-delay 0` syncs a replica at once (the start, and a
/// master that rejoins as a replica after a failover). Stopped in the destructor. Use from the thread that made it.
class ClusterFixture {
public:
    ClusterFixture(int masters = 3, int replicasPerMaster = 1, int nodeTimeoutMs = 1000);
    ~ClusterFixture();
    ClusterFixture(const ClusterFixture &) = delete;
    ClusterFixture &operator=(const ClusterFixture &) = delete;

    /// True if redis-server and redis-cli are on PATH.
    static bool installed();
    /// Starts the nodes, creates the cluster and waits until it is ready (up to 30 s).
    /// False with errorString() otherwise.
    bool start();
    QString errorString() const { return m_error; }

    /// `redis-cluster://` naming every node as a seed, with the given command timeout.
    RedisUrl url(int timeoutMs = 1000) const;
    /// Every node, in start order.
    const std::vector<std::unique_ptr<RedisFixture>> &nodes() const { return m_nodes; }
    /// The node listening on `port`, or nullptr.
    RedisFixture *byPort(int port) const;
    /// The master owning `slot` as a running node says (CLUSTER SLOTS), or nullptr.
    RedisFixture *masterOf(int slot) const;
    /// The running masters (by ROLE).
    QList<RedisFixture *> masters() const;
    /// The replicas of `master` (CLUSTER REPLICAS), or empty.
    QList<RedisFixture *> replicasOf(RedisFixture *master) const;
    /// The node id of `node` (CLUSTER MYID).
    QByteArray idOf(RedisFixture *node) const;

    /// Waits until every running node says cluster_state:ok and all of them name the same
    /// owner for `slot` (any slot when -1) and that owner is a running master. False after
    /// `timeoutMs`.
    bool waitUntilStable(int timeoutMs = 15000, int slot = -1) const;

    /// Moves `slot` from `from` to `to` as an operator's tool does: IMPORTING on `to`,
    /// MIGRATING on `from`, then `whileMigrating` (the slot is MIGRATING, all keys still on
    /// `from`), MIGRATE of its keys (all in one MIGRATE when `oneByOne` is false, else one
    /// key per MIGRATE with `betweenKeys` after each), `afterMove` (keys on `to`, the slot
    /// still MIGRATING: ASK), then SETSLOT NODE on `to`, `from` and every other master.
    /// False with errorString() on a refused step.
    bool migrateSlot(int slot, RedisFixture *from, RedisFixture *to, const std::function<void()> &whileMigrating,
                     const std::function<void()> &afterMove, bool oneByOne = false,
                     const std::function<void()> &betweenKeys = {});

private:
    bool checked(const Result<RedisValue> &r, const QString &what);

    int m_masters;
    int m_replicas;
    int m_nodeTimeoutMs;
    std::vector<std::unique_ptr<RedisFixture>> m_nodes;
    QString m_error;
};

} // namespace flashstock

/// Skips (developer machine) or fails (CI, test::missingServerFails) the current test if
/// redis-server or redis-cli is missing.
#define FLASHSTOCK_REQUIRE_REDIS_CLUSTER()                                                                     \
    FS_REQUIRE(flashstock::ClusterFixture::installed(), "redis-server or redis-cli is not on PATH")
