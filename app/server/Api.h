#pragma once

#include "Domain.h"
#include "HttpServer.h"
#include "ServerState.h"

#include <atomic>

namespace flashstock::server {

class AccessLog;
class EngineWorkers;
class GateDispatcher;
class ServerMetrics;

/// Body limits of API v1, bytes.
inline constexpr qint64 kBodyLimit = 64 * 1024;
inline constexpr qint64 kBatchBodyLimit = 1024 * 1024;
/// Most reservations in one POST /v1/reservations/batch.
inline constexpr qsizetype kMaxBatchReservations = 1000;

/// API v1 of flashstock-server (the routes, their scopes, status codes and JSON; see the
/// README's "Serving storefronts"). Request threads parse, check and authenticate here and
/// never wait on the book or the gate: reserves go to the gate dispatcher (whose winners go
/// to the book writers), confirms, releases and reads to the engine workers, and the answer
/// comes back through PendingReply.
/// Result words and the error shape are the CLI's (ContractJson).
class Api final : public HttpHandler {
public:
    struct Parts {
        Published<AccessTokenSet> &tokens;
        Published<Readiness> &readiness;
        GateDispatcher &dispatcher;
        EngineWorkers &workers;
        ServerMetrics &metrics;
        AccessLog &accessLog;
        /// The server itself: who acts without a token (--no-auth), and the source that a
        /// token's actions name.
        Actor self;
        bool noAuth = false; ///< every route open (only on a loopback address; checked at start)
    };
    explicit Api(Parts parts);

    /// From now on new requests get 503 (with `Connection: close`); /healthz still answers.
    void startDraining() { m_draining = true; }
    /// The answer a drain gives a new request: 503 `unavailable`, `Connection: close`.
    static HttpReply drainingReply();
    /// The answer a drain gives a request still parked at its deadline: 503 `outcome_unknown`
    /// (the engine has it, so it may yet happen or not; the same request again tells).
    static HttpReply unfinishedReply();

    HeadDecision onHead(const HttpHead &head) override;
    void onRequest(const HttpHead &head, const HeadDecision &decision, QByteArray body,
                   std::shared_ptr<PendingReply> reply) override;
    void onDone(const HttpHead &head, const HeadDecision &decision, const HttpReply &reply, double seconds) override;
    void onConnectionRefused(const QString &reason) override;

private:
    /// Who acts in a request that `decision` let through: its token (by name, from this
    /// server), reaching every order of the route if a scope of the token says so (release:
    /// `operate`; the order's GET: `read` or `operate`; confirm: `pay`), else only those it
    /// created; without a token (--no-auth), the server itself.
    Actor actorOf(const HeadDecision &decision) const;
    void reserve(const QByteArray &body, const Actor &by, std::shared_ptr<PendingReply> reply);
    void reserveBatch(const QByteArray &body, const Actor &by, std::shared_ptr<PendingReply> reply);
    void confirmOrRelease(bool confirm, const QString &order, const QByteArray &body, const Actor &by,
                          std::shared_ptr<PendingReply> reply);
    void read(int route, const QString &id, const Actor &by, std::shared_ptr<PendingReply> reply);
    HttpReply readyz() const;

    Parts m_p;
    std::atomic<bool> m_draining{false};
};

} // namespace flashstock::server
