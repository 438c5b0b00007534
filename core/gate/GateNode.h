#pragma once

#include "Result.h"
#include "gate/RedisConnection.h"
#include "gate/RedisUrl.h"

#include <chrono>
#include <optional>

namespace flashstock {

/// One Redis node as one gate uses it: its connection, whether the gate's scripts are
/// loaded there, and when it last answered. A node of a cluster that could not be reached,
/// or did not answer within the command timeout (a hung server keeps its connections open),
/// is skipped for a short while (kRetryMs), so calls for its SKUs fail at once instead of
/// each waiting for the timeout again. Not thread-safe: it belongs to its Gate's thread.
class GateNode {
public:
    using Clock = std::chrono::steady_clock;
    /// How long a cluster node that failed is skipped, ms.
    static constexpr int kRetryMs = 200;

    /// `url` is one node's (Tcp or Unix). `skipWhileDown`: a cluster node (see above).
    GateNode(RedisUrl url, bool skipWhileDown);

    /// host:port, or the socket path.
    QString address() const;
    /// Connects if needed and, on a new connection, loads every script. Unavailable while
    /// skipped or when the node cannot be reached or does not answer (which starts the skip).
    [[nodiscard]] Result<void> prepare();
    /// SCRIPT LOAD of every script again (the node answered NOSCRIPT: it lost its cache).
    [[nodiscard]] Result<void> reloadScripts();
    /// connection().send(); a transport failure starts the skip.
    [[nodiscard]] Result<void> send(const QList<QList<QByteArray>> &commands);
    /// connection().receive(); replies count as an answer, a transport failure starts the skip.
    [[nodiscard]] Result<QList<RedisValue>> receive(qsizetype count);
    /// Records what a call made on connection() came to: Unavailable (a transport failure)
    /// starts the skip, anything else counts as an answer. Returns `r`.
    template <typename T>
    Result<T> noted(Result<T> r)
    {
        if (r || r.error().code != ErrorCode::Unavailable)
            m_answeredAt = Clock::now();
        else
            failed(r.error());
        return r;
    }
    /// The node's connection (connects lazily on its own; prepare() also loads scripts).
    RedisConnection &connection() { return m_conn; }
    /// True while the last failure is less than kRetryMs old.
    bool skipped() const;
    /// True when the node failed after its last answer (or never answered since it failed).
    bool troubled() const;
    /// When the node last answered this gate; nullopt if never.
    std::optional<Clock::time_point> answeredAt() const { return m_answeredAt; }
    /// Successful connects so far.
    int connectCount() const { return m_conn.connectCount(); }

private:
    /// A transport failure: starts the skip (Unavailable only) and returns `error`.
    std::unexpected<Error> failed(const Error &error);

    RedisConnection m_conn;
    bool m_skipWhileDown;
    int m_scriptsLoadedFor = -1;               ///< connectCount() at which the scripts were last loaded
    std::optional<Clock::time_point> m_failedAt;   ///< the last transport failure
    std::optional<Clock::time_point> m_answeredAt; ///< the last answer
    QString m_downReason;                      ///< the last failure's message
};

} // namespace flashstock
