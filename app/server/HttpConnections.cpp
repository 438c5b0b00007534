#include "HttpServerParts.h"

#include "ClientAddress.h"
#include "ContractJson.h"
#include "ServerLog.h"

#include <QJsonDocument>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

/// Data that came this soon after a connection's last answer went out is taken for the end of
/// the request before (the kernel's receive time is kept in jiffies, a few ms apart), not
/// the first byte of the next one: the next one is found by its request line or its next byte.
constexpr qint64 kAfterAnswerMs = 50;

/// What a connection whose request did not arrive in time gets, written on its socket.
QByteArray requestTimeoutAnswer(int seconds)
{
    const QByteArray body = QJsonDocument(errorJson(Error{ErrorCode::InvalidArgument,
                                                          u"request: not all in within %1 s of its first byte (the "
                                                          u"request timeout); the connection is closed"_s.arg(seconds),
                                                          u"request"_s}))
                                .toJson(QJsonDocument::Compact);
    return "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: "
        + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

} // namespace

void HttpServer::sweep(Loop &loop, qint64 nowMs)
{
    const qint64 limitMs = qint64(m_limits.requestTimeoutSeconds) * 1000;
    for (Connection *c = loop.connections; c; c = c->next) {
        if (c->state == Connection::State::Waiting) {
            // The next request's first byte: data received since the last answer went out.
            // libmicrohttpd reads it into its buffer at once, so only the kernel's receive
            // time says a head is trickling in.
            tcp_info info{};
            socklen_t size = sizeof info;
            if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &info, &size) == 0) {
                const qint64 lastDataMs = nowMs - qint64(info.tcpi_last_data_recv);
                if (lastDataMs > c->waitingSinceMs + kAfterAnswerMs) {
                    c->state = Connection::State::Arriving;
                    c->requestStartMs = lastDataMs;
                }
            }
        }
        if (c->state != Connection::State::Arriving || nowMs - c->requestStartMs <= limitMs)
            continue;
        c->state = Connection::State::Ours;
        if (Exchange *ex = c->exchange) { // for the access log and metrics
            ex->sent.status = MHD_HTTP_REQUEST_TIMEOUT;
            ex->sent.result = u"request_timeout"_s;
            if (!ex->started && ex->target.begin) // its head is not in: its path, as decoded in place
                ex->head.path = QByteArray(ex->target.begin);
        }
        // A 408 unless libmicrohttpd is writing an answer of its own; then the socket is shut,
        // and libmicrohttpd, reading its end, closes the connection in this loop's MHD_run.
        if (!MHD_get_connection_info(c->mhd, MHD_CONNECTION_INFO_HTTP_STATUS)) {
            const QByteArray answer = requestTimeoutAnswer(m_limits.requestTimeoutSeconds);
            [[maybe_unused]] const ssize_t sent
                = ::send(c->fd, answer.constData(), size_t(answer.size()), MSG_DONTWAIT | MSG_NOSIGNAL);
        }
        ::shutdown(c->fd, SHUT_RDWR);
        ServerLog::trouble(u"request-timeout"_s,
                           u"http: %1: a request not all in %2 s after its first byte (the request timeout, "
                           u"--request-timeout): answered 408 and closed"_s.arg(clientKeyText(c->key),
                                                                                QString::number(
                                                                                    m_limits.requestTimeoutSeconds)));
        m_handler.onConnectionRefused(u"request_timeout"_s);
    }
}

MHD_Result HttpServer::onAcceptThunk(void *cls, const sockaddr *address, socklen_t)
{
    // Both limits over every request thread's daemon (each daemon's own would count only its
    // connections). Counted once the connection is set up (onConnectionThunk), so connections
    // accepted at the same moment on several threads can pass a limit by at most the number
    // of threads less one.
    auto *self = static_cast<HttpServer *>(cls);
    const QByteArray key = clientKey(address);
    QString reason;
    QString why;
    {
        std::lock_guard lock(self->m_perIpMutex);
        const auto it = key.isEmpty() ? self->m_perIp.end() : self->m_perIp.find(key);
        if (self->m_open >= self->m_limits.connectionLimit) {
            reason = u"connection_limit"_s;
            why = u"http: %1 open connections, the connection limit (--max-connections): refused one from %2"_s.arg(
                QString::number(self->m_open), clientKeyText(key));
        } else if (it != self->m_perIp.end() && it->second >= self->m_limits.perIpLimit) {
            reason = u"per_ip_limit"_s;
            why = u"http: %1 has %2 open connections, the per-address limit (--per-ip-connections): refused"_s.arg(
                clientKeyText(key), QString::number(it->second));
        }
    }
    if (reason.isEmpty())
        return MHD_YES;
    ServerLog::trouble(reason, why);
    self->m_handler.onConnectionRefused(reason);
    return MHD_NO;
}

void HttpServer::onConnectionThunk(void *cls, MHD_Connection *connection, void **socketContext,
                                   MHD_ConnectionNotificationCode code)
{
    auto *loop = static_cast<Loop *>(cls);
    HttpServer *self = loop->server;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const MHD_ConnectionInfo *address = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const MHD_ConnectionInfo *fd = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        auto *c = new Connection;
        c->loop = loop;
        c->mhd = connection;
        c->fd = fd ? fd->connect_fd : -1;
        c->key = clientKey(address ? address->client_addr : nullptr);
        c->requestStartMs = steadyMs(); // a connection's first request: from its accept
        c->next = std::exchange(loop->connections, c);
        if (c->next)
            c->next->prev = c;
        *socketContext = c;
        std::lock_guard lock(self->m_perIpMutex);
        ++self->m_open;
        if (!c->key.isEmpty())
            ++self->m_perIp[c->key];
        return;
    }
    auto *c = static_cast<Connection *>(*socketContext);
    if (!c)
        return;
    *socketContext = nullptr;
    (c->prev ? c->prev->next : loop->connections) = c->next;
    if (c->next)
        c->next->prev = c->prev;
    {
        std::lock_guard lock(self->m_perIpMutex);
        --self->m_open;
        if (const auto it = self->m_perIp.find(c->key); it != self->m_perIp.end() && --it->second <= 0)
            self->m_perIp.erase(it);
    }
    delete c;
}

void *HttpServer::onRequestLineThunk(void *, const char *uri, MHD_Connection *connection)
{
    // A request begins: its Exchange lives from here to onCompletedThunk (libmicrohttpd hands
    // it to every access call and the completion as its context).
    auto *ex = new Exchange;
    ex->head.connection = connection;
    ex->target = RawTarget::of(uri);
    if (Connection *c = Connection::of(connection)) {
        c->exchange = ex;
        if (c->state == Connection::State::Waiting) {
            c->state = Connection::State::Arriving;
            c->requestStartMs = steadyMs();
        }
    }
    return ex;
}

} // namespace flashstock::server
