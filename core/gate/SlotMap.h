#pragma once

#include "Result.h"
#include "gate/RedisConnection.h"
#include "gate/RedisUrl.h"

#include <QList>

#include <optional>
#include <vector>

namespace flashstock {

/// Which master of a Redis Cluster owns each of the 16384 hash slots, and the replicas of
/// each master, as one node answered CLUSTER SLOTS. A value type; any thread.
class SlotMap {
public:
    /// An empty map: no slot assigned.
    SlotMap();

    /// Parses a CLUSTER SHARDS reply (Redis 7): each shard's slot ranges, its master and its
    /// replicas (also those CLUSTER SLOTS leaves out while they have no data yet). A node's
    /// endpoint is its `endpoint` (`ip` when that is empty, `answeredBy` when both are); one
    /// whose endpoint is unknown (`?`) is left out. Internal if it is not a shards table.
    [[nodiscard]] static Result<SlotMap> fromClusterShards(const RedisValue &reply,
                                                           const RedisNodeAddress &answeredBy);
    /// Parses a CLUSTER SLOTS reply (servers before 7.0). A node entry without an IP (empty string) is the node
    /// that answered, `answeredBy`; one whose endpoint is unknown (`?`) is left out.
    /// Internal if the reply is not a CLUSTER SLOTS table.
    [[nodiscard]] static Result<SlotMap> fromClusterSlots(const RedisValue &reply,
                                                          const RedisNodeAddress &answeredBy);

    /// Reads the map from the node `connection` talks to (`address`): CLUSTER SHARDS, or
    /// CLUSTER SLOTS when the server predates it (then `shardsUnknown` is set, and a caller
    /// that keeps it goes straight to SLOTS next time). Unavailable on a transport failure;
    /// InvalidArgument (field `redis`) if the node has cluster support disabled; Internal for
    /// another refusal or a reply that is not a slot table. Blocking, the connection's thread.
    [[nodiscard]] static Result<SlotMap> read(RedisConnection &connection, const RedisNodeAddress &address,
                                              bool &shardsUnknown);

    /// The master that owns `slot` (0..16383), std::nullopt if no master serves it.
    std::optional<RedisNodeAddress> masterOf(int slot) const;
    /// Records that `master` owns `slot` now (a MOVED redirection).
    void assign(int slot, const RedisNodeAddress &master);

    /// The masters that own at least one slot, in the order first seen.
    QList<RedisNodeAddress> masters() const;
    /// The replicas of `master` (empty for an unknown one).
    QList<RedisNodeAddress> replicasOf(const RedisNodeAddress &master) const;
    /// Slots `master` owns.
    int slotCount(const RedisNodeAddress &master) const;
    /// Slots some master owns (16384 when the cluster covers every slot).
    int assignedSlots() const;
    /// Every node in the map, masters first, each once.
    QList<RedisNodeAddress> nodes() const;

    /// The same masters (in the same order), replicas and slot owners.
    friend bool operator==(const SlotMap &, const SlotMap &) = default;

private:
    int indexOf(const RedisNodeAddress &master) const;

    QList<RedisNodeAddress> m_masters;          ///< every master ever recorded
    QList<QList<RedisNodeAddress>> m_replicas;  ///< per entry of m_masters
    std::vector<qint16> m_owner;                ///< slot -> index into m_masters, -1 = none
};

} // namespace flashstock
