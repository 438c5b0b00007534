#pragma once

#include "Result.h"
#include "gate/GateHealth.h"
#include "gate/RedisConnection.h"
#include "gate/RedisUrl.h"
#include "gate/ScriptRegistry.h"
#include "gate/SlotMap.h"

#include <QElapsedTimer>
#include <QList>

#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace flashstock {

class GateNode;

/// One command for GateRouter: what to send and for which hash slot.
struct GateCommand {
    int slot = -1;                   ///< hash slot of its keys (HashSlot::ofSku); -1 = any master
    QList<QByteArray> argv;          ///< the command (EVALSHA ... for a script)
    bool writes = false;             ///< changes data: waits for replicas under `?wait=N`
    std::optional<ScriptId> script;  ///< the script of an EVALSHA (NOSCRIPT: load, retry, then EVAL)
};

/// Sends the gate's commands to the Redis node that serves them: the one server of a
/// `redis://` or `unix://` URL, or, for `redis-cluster://`, the master that owns each
/// command's hash slot by the slot map (CLUSTER SHARDS, or CLUSTER SLOTS before Redis 7,
/// from any seed or known node).
///
/// In a cluster: MOVED updates the map and resends; ASK resends once to the named node
/// after ASKING; TRYAGAIN, CLUSTERDOWN and READONLY (and a slot the map gives no master)
/// are resent with backoff (2 ms doubling to 50 ms) until the URL's command timeout has
/// passed since the call began, then answered as they are. The map is read again every
/// kRefreshMs and, after trouble (a redirection, a node that did not answer), at most every
/// kTroubleRefreshMs, asking the nodes that answered most recently first. A node that
/// cannot be reached answers Unavailable for its commands only, unless the map read at once
/// then names another node for them (a promoted replica): nothing was sent, so they go
/// there. A node that did not answer within the command timeout is skipped for a while
/// (GateNode::kRetryMs): its commands fail at once. On every node a NOSCRIPT loads all
/// scripts and resends once, then as EVAL. Under `?wait=N` each node's pipeline of writes
/// ends with WAIT; fewer confirmations than N make those writes Unavailable (their effect
/// stands on the master; the reconciler heals it like any unknown outcome).
///
/// One connection per node, made lazily. Owned by one Gate: one thread.
class GateRouter {
public:
    /// How often the slot map is read again without trouble, ms.
    static constexpr int kRefreshMs = 5000;
    /// How soon after trouble it is read again, at the earliest, ms.
    static constexpr int kTroubleRefreshMs = 100;
    /// Redirections (MOVED, ASK) one command follows before its last answer stands.
    static constexpr int kMaxRedirects = 5;

    /// `url` is Tcp, Unix or Cluster. Does not connect yet.
    explicit GateRouter(RedisUrl url);
    ~GateRouter();
    GateRouter(const GateRouter &) = delete;
    GateRouter &operator=(const GateRouter &) = delete;

    /// Connects now: the one server, or the slot map and every master (loading scripts).
    /// Unavailable if the server, or no seed or known node, answers.
    [[nodiscard]] Result<void> connect();
    /// Runs `commands`, one pipeline per node (the nodes work at the same time), following
    /// redirections as above. One Result per command, in order: a server's error reply is a
    /// value of type Error; Unavailable when its node could not be reached or the transport
    /// failed (the outcome of a command already sent is then unknown).
    QList<Result<RedisValue>> execute(const QList<GateCommand> &commands);
    /// execute() of one command.
    Result<RedisValue> execute(const GateCommand &command);
    /// Every node's health: PING (and SCRIPT EXISTS on nodes that serve SKUs). Reads the
    /// slot map first in a cluster.
    QList<GateNodeHealth> health();
    /// Runs `work` on the connection of each node that serves SKUs: the one server, or every
    /// master of a slot map read now (for commands that walk one node's keys, such as SCAN).
    /// Stops at the first error `work` returns. Unavailable when no node gives a map or a
    /// master cannot be reached.
    [[nodiscard]] Result<void> forEachServingNode(const std::function<Result<void>(RedisConnection &)> &work);
    /// Calls `listener` (on this router's thread) with every slot map read that differs from
    /// the one before (the first one included). Cluster only; empty: none.
    void setMapListener(std::function<void(const SlotMap &)> listener) { m_mapListener = std::move(listener); }
    /// The URL given.
    const RedisUrl &url() const { return m_url; }
    /// Successful connects so far, over all nodes.
    int connectCount() const;

private:
    struct Pending;
    struct Batch;
    GateNode &node(const RedisNodeAddress &address);
    /// The node `p` goes to now, or nullptr with the reason in `why` (`unowned`: the map has
    /// no master for its slot).
    GateNode *route(const GateCommand &command, const Pending &p, QString &why, bool &unowned);
    void send(const QList<GateCommand> &commands, Batch &batch, QList<std::optional<Result<RedisValue>>> &results,
              QList<Pending> &again);
    void receive(const QList<GateCommand> &commands, Batch &batch, QList<std::optional<Result<RedisValue>>> &results,
                 QList<Pending> &again, bool &backoff, bool retryExpired);
    void refreshIfDue();
    [[nodiscard]] Result<void> refreshMap();

    RedisUrl m_url;
    std::unique_ptr<GateNode> m_single;                  ///< Tcp/Unix: the one node
    std::map<QString, std::unique_ptr<GateNode>> m_nodes; ///< Cluster: by host:port
    std::optional<SlotMap> m_map;                         ///< Cluster: the slot map, once read
    QElapsedTimer m_mapAge;                               ///< since the map was last read (or tried)
    bool m_refreshWanted = false;                         ///< trouble seen since
    QString m_mapError;                                   ///< why the last read failed
    bool m_shardsUnknown = false;                         ///< the server predates CLUSTER SHARDS
    std::function<void(const SlotMap &)> m_mapListener;   ///< see setMapListener
};

} // namespace flashstock
