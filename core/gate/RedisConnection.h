#pragma once

#include "Result.h"
#include "gate/RedisUrl.h"

#include <QByteArray>
#include <QList>

struct redisContext;

namespace flashstock {

/// One Redis reply, copied out of hiredis into a value type (RESP2 types only).
struct RedisValue {
    enum class Type { Nil, Integer, String, Status, Error, Array };

    Type type = Type::Nil;
    qint64 integer = 0;        ///< Integer replies
    QByteArray str;            ///< String, Status and Error replies
    QList<RedisValue> elements; ///< Array replies

    bool isError() const { return type == Type::Error; }
    /// True for an error reply starting with `prefix` (e.g. "NOSCRIPT", "MOVED").
    bool isErrorWith(const char *prefix) const { return isError() && str.startsWith(prefix); }
    /// An integer reply's value, or a string reply parsed as an integer; `fallback` otherwise.
    qint64 toInteger(qint64 fallback = 0) const;
};

/// One blocking connection to Redis: RAII owner of a hiredis context.
///
/// Connects lazily on the first command (AUTH and SELECT from the URL, command timeout via
/// redisSetTimeout, TCP keepalive). Before each command an idle context is checked for a
/// close by the server (idle timeout, restart) and replaced. A transport failure (refused, reset, timeout) frees
/// the context; the next call connects again, so a dead context is never reused. SIGPIPE
/// is ignored once per process on first construction. Not thread-safe: one connection
/// belongs to one thread at a time.
class RedisConnection {
public:
    /// Does not connect yet.
    explicit RedisConnection(RedisUrl url);
    ~RedisConnection();
    RedisConnection(const RedisConnection &) = delete;
    RedisConnection &operator=(const RedisConnection &) = delete;

    /// Connects now if not connected. Unavailable if the server cannot be reached within
    /// the connect timeout, or if AUTH is refused (the message says authentication failed);
    /// InvalidArgument if SELECT is refused.
    [[nodiscard]] Result<void> ensureConnected();

    /// Sends one command (binary-safe arguments) and waits up to the command timeout.
    /// A server error reply (NOSCRIPT, MOVED, WRONGTYPE...) is a value of type Error, not a
    /// failed Result; transport failures are Unavailable, and so is NOAUTH (a server that
    /// wants a password none was given for: authentication failed).
    [[nodiscard]] Result<RedisValue> command(const QList<QByteArray> &argv);

    /// Sends all `commands` in one write and reads their replies in order (pipelining).
    /// Unavailable if the transport fails at any point (replies read so far are lost).
    [[nodiscard]] Result<QList<RedisValue>> pipeline(const QList<QList<QByteArray>> &commands);
    /// The first half of pipeline(): connects if needed and writes all `commands` without
    /// reading, so several connections' servers work at once. Follow with receive().
    [[nodiscard]] Result<void> send(const QList<QList<QByteArray>> &commands);
    /// The second half: reads `count` replies of commands sent before, in order.
    /// Unavailable (and the context dropped) if the transport fails.
    [[nodiscard]] Result<QList<RedisValue>> receive(qsizetype count);

    /// Drops the context (the next call connects again).
    void disconnect();
    /// True while a live context is held.
    bool isConnected() const { return m_context != nullptr; }
    /// Number of successful connects so far (a reconnect adds one).
    int connectCount() const { return m_connectCount; }
    /// The URL this connection uses.
    const RedisUrl &url() const { return m_url; }

private:
    Result<RedisValue> transportFailure(const char *what);
    /// Unavailable, "authentication failed", naming the server and its `reply`; disconnects.
    std::unexpected<Error> authenticationFailed(const QString &reply);
    bool peerClosed() const;

    RedisUrl m_url;
    redisContext *m_context = nullptr; ///< owned; null when not connected
    int m_connectCount = 0;
};

} // namespace flashstock
