#pragma once

#include "Result.h"
#include "gate/RedisConnection.h"
#include "gate/RedisUrl.h"

#include <QElapsedTimer>

namespace flashstock {

/// One Redis node as one gate uses it: its connection and whether the gate's scripts are
/// loaded there. A node of a cluster that could not be reached is skipped for a short
/// while (kRetryMs), so calls for its SKUs fail at once instead of each waiting for the
/// connect timeout. Not thread-safe: it belongs to its Gate's thread.
class GateNode {
public:
    /// How long a cluster node that could not be reached is skipped, ms.
    static constexpr int kRetryMs = 200;

    /// `url` is one node's (Tcp or Unix). `skipWhileDown`: a cluster node (see above).
    GateNode(RedisUrl url, bool skipWhileDown);

    /// host:port, or the socket path.
    QString address() const;
    /// Connects if needed and, on a new connection, loads every script. Unavailable while
    /// skipped or when the node cannot be reached (which starts the skip).
    [[nodiscard]] Result<void> prepare();
    /// SCRIPT LOAD of every script again (the node answered NOSCRIPT: it lost its cache).
    [[nodiscard]] Result<void> reloadScripts();
    /// The node's connection (connects lazily on its own; prepare() also loads scripts).
    RedisConnection &connection() { return m_conn; }
    /// True while a failed connect is less than kRetryMs old.
    bool skipped() const;
    /// Successful connects so far.
    int connectCount() const { return m_conn.connectCount(); }

private:
    RedisConnection m_conn;
    bool m_skipWhileDown;
    int m_scriptsLoadedFor = -1; ///< connectCount() at which the scripts were last loaded
    QElapsedTimer m_downSince;   ///< running since the last failed connect
    QString m_downReason;        ///< that failure's message
};

} // namespace flashstock
