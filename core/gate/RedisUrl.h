#pragma once

#include "Result.h"

#include <QString>

namespace flashstock {

/// Where the gate's Redis lives, parsed from `--redis`.
///
/// Accepted forms:
/// - `redis://[[user]:password@]host[:port][/db]` (port 6379 and db 0 by default)
/// - `unix:///absolute/path/redis.sock` (db and password through `?db=` and `?password=`)
/// - `none`: no gate at all (book-only)
///
/// Both URL forms take `?connect_timeout_ms=N&timeout_ms=N` (defaults 500 and 1000 ms,
/// each 1..600000). A plain value type; any thread.
struct RedisUrl {
    enum class Kind {
        None, ///< `none`: no gate
        Tcp,  ///< host and port
        Unix, ///< unix domain socket
    };

    Kind kind = Kind::None;
    QString host;             ///< Tcp: host name or IP literal (without brackets)
    int port = 6379;          ///< Tcp: 1..65535
    QString socketPath;       ///< Unix: absolute path of the socket
    QString user;             ///< ACL user for AUTH; empty = default user
    QString password;         ///< AUTH password; empty = no AUTH
    int db = 0;               ///< SELECT index, 0..15 by Redis default config (we accept 0..1023)
    int connectTimeoutMs = 500; ///< ms to wait for a connection
    int timeoutMs = 1000;       ///< ms to wait for one command's reply

    /// Parses `text`. Malformed input is InvalidArgument with field "redis" and the value
    /// (password masked) in the message.
    [[nodiscard]] static Result<RedisUrl> parse(const QString &text);
    /// A Unix-socket URL with default timeouts.
    static RedisUrl unixSocket(const QString &path);
    /// A TCP URL with default timeouts.
    static RedisUrl tcp(const QString &host, int port);

    /// True for the `none` marker.
    bool isNone() const { return kind == Kind::None; }
    /// The URL again, with the password replaced by `***` (safe for logs and errors).
    QString toDisplayString() const;
    /// The URL again, password included (to hand to another process).
    QString toString() const;
};

} // namespace flashstock
