#pragma once

#include "Result.h"

#include <QList>
#include <QString>

#include <optional>

namespace flashstock {

/// One node of a Redis Cluster: where to reach it.
struct RedisNodeAddress {
    QString host;    ///< host name or IP literal (without brackets)
    int port = 6379; ///< 1..65535

    /// `host:port` (`[v6]:port` for an IPv6 literal), as Redis writes it in MOVED and ASK.
    QString toString() const;
    /// Parses `host:port`, `[v6]:port` or `host` (port 6379); std::nullopt if malformed.
    static std::optional<RedisNodeAddress> parse(QStringView text);
    friend bool operator==(const RedisNodeAddress &, const RedisNodeAddress &) = default;
};

/// Where the gate's Redis lives, parsed from `--redis`.
///
/// Accepted forms:
/// - `redis://[[user]:password@]host[:port][/db]` (port 6379 and db 0 by default)
/// - `unix:///absolute/path/redis.sock` (db and password through `?db=` and `?password=`)
/// - `redis-cluster://[[user]:password@]host:port[,host:port...]`: a Redis Cluster named by
///   seed nodes (any of its nodes; the gate reads the slot map from the first that answers);
///   database 0 only, so no path
/// - `none`: no gate at all (book-only)
///
/// Every URL form takes `?connect_timeout_ms=N&timeout_ms=N` (defaults 500 and 1000 ms,
/// each 1..600000) and `?wait=N` (0..16, default 0): each gate write then waits until N
/// replicas confirmed it (WAIT, for at most half the command timeout) or answers
/// Unavailable. A password is never shown by toDisplayString() or in a parse error (one that
/// is not in the URL comes from FLASHSTOCK_REDIS_PASSWORD: EngineOpener).
/// A plain value type; any thread.
struct RedisUrl {
    enum class Kind {
        None,    ///< `none`: no gate
        Tcp,     ///< host and port
        Unix,    ///< unix domain socket
        Cluster, ///< a Redis Cluster, by seed nodes
    };

    Kind kind = Kind::None;
    QString host;             ///< Tcp: host name or IP literal (without brackets)
    int port = 6379;          ///< Tcp: 1..65535
    QList<RedisNodeAddress> seeds; ///< Cluster: the seed nodes, in the order given (at least one)
    QString socketPath;       ///< Unix: absolute path of the socket
    QString user;             ///< ACL user for AUTH; empty = default user
    QString password;         ///< AUTH password; empty = no AUTH
    int db = 0;               ///< SELECT index, 0..15 by Redis default config (we accept 0..1023)
    int connectTimeoutMs = 500; ///< ms to wait for a connection
    int timeoutMs = 1000;       ///< ms to wait for one command's reply
    int waitReplicas = 0;       ///< `?wait=N`: replicas each gate write waits for; 0 = none

    /// Parses `text`. Malformed input is InvalidArgument with field "redis" and the value
    /// (password masked) in the message.
    [[nodiscard]] static Result<RedisUrl> parse(const QString &text);
    /// A Unix-socket URL with default timeouts.
    static RedisUrl unixSocket(const QString &path);
    /// A TCP URL with default timeouts.
    static RedisUrl tcp(const QString &host, int port);
    /// A cluster URL with default timeouts.
    static RedisUrl cluster(const QList<RedisNodeAddress> &seeds);

    /// The TCP URL of one node of this URL's cluster (or server): the same credentials,
    /// timeouts and wait, database 0.
    RedisUrl node(const RedisNodeAddress &address) const;
    /// Milliseconds a WAIT may block: half the command timeout, so its answer arrives
    /// before the connection gives up.
    int waitTimeoutMs() const { return qMax(1, timeoutMs / 2); }

    /// True for the `none` marker.
    bool isNone() const { return kind == Kind::None; }
    /// True for a `redis-cluster://` URL.
    bool isCluster() const { return kind == Kind::Cluster; }
    /// The URL again, with the password replaced by `***` (safe for logs and errors).
    QString toDisplayString() const;
    /// The URL again, password included (to hand to another process).
    QString toString() const;
};

} // namespace flashstock
