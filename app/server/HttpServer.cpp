#include "HttpServer.h"

#include "ServerLog.h"

#include <QElapsedTimer>
#include <QHostAddress>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

HttpReply tooLarge(qint64 limit)
{
    HttpReply r;
    r.status = MHD_HTTP_CONTENT_TOO_LARGE;
    r.result = u"too_large"_s;
    r.body = QByteArrayLiteral(R"({"error":{"code":"invalid_argument","message":"body: larger than )")
        + QByteArray::number(limit) + QByteArrayLiteral(R"( bytes, the limit of this route","field":"body"}})");
    return r;
}

HttpReply busy()
{
    HttpReply r;
    r.status = MHD_HTTP_SERVICE_UNAVAILABLE;
    r.result = u"busy"_s;
    r.headers << std::pair{QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1")};
    r.body = QByteArrayLiteral(R"({"error":{"code":"unavailable","message":"the server is receiving too many )"
                               R"(request bodies at once; retry","field":null}})");
    return r;
}

} // namespace

QString HttpHead::client() const
{
    const MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr)
        return {};
    return QHostAddress(info->client_addr).toString();
}

QByteArray HttpHead::header(const char *name) const
{
    return QByteArray(MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name));
}

/// One request on one connection, from its headers to MHD's completion notice.
struct HttpServer::Exchange {
    HttpHead head;
    HeadDecision decision;
    QByteArray body;
    qint64 charged = 0;         ///< bytes of body counted against the server's body budget
    bool answeredEarly = false; ///< a reply was queued before the body was read
    bool refused = false;       ///< decision.reply answers once the body is in (it is dropped)
    qint64 dropped = 0;         ///< bytes of a refused body read and dropped
    std::shared_ptr<PendingReply> pending;
    HttpReply sent;             ///< what went out (for onDone)
    bool counted = false;       ///< in m_inFlight
    QElapsedTimer age;
};

PendingReply::PendingReply(HttpServer &server, MHD_Connection *connection)
    : m_server(server)
    , m_connection(connection)
{
}

bool PendingReply::answered() const
{
    std::lock_guard lock(m_mutex);
    return m_answered;
}

void PendingReply::send(HttpReply reply)
{
    answer(std::move(reply), {});
}

void PendingReply::sendMade(std::function<HttpReply()> make)
{
    answer(std::nullopt, std::move(make));
}

void PendingReply::answer(std::optional<HttpReply> reply, std::function<HttpReply()> make)
{
    bool wasParked = false;
    {
        std::lock_guard lock(m_mutex);
        if (m_answered)
            return;
        m_answered = true;
        m_reply = std::move(reply);
        m_make = std::move(make);
        wasParked = std::exchange(m_parked, false);
    }
    if (wasParked) {
        m_server.setParked(shared_from_this(), false);
        m_server.resume(m_connection);
    }
}

bool PendingReply::takeOrPark(std::optional<HttpReply> &out)
{
    std::unique_lock lock(m_mutex);
    if (m_reply) {
        out = std::exchange(m_reply, std::nullopt);
        return true;
    }
    if (m_make) {
        const std::function<HttpReply()> make = std::exchange(m_make, {});
        lock.unlock();
        out = make();
        return true;
    }
    m_parked = true;
    m_server.setParked(shared_from_this(), true);
    MHD_suspend_connection(m_connection);
    return false;
}

HttpServer::HttpServer(HttpHandler &handler, HttpLimits limits)
    : m_handler(handler)
    , m_limits(limits)
{
}

HttpServer::~HttpServer()
{
    stop();
}

Result<void> HttpServer::start(const QString &host, int port)
{
    QHostAddress address;
    if (!address.setAddress(host))
        return fail(ErrorCode::InvalidArgument, u"listen: %1 is not an IP address"_s.arg(host), u"listen"_s);
    sockaddr_storage storage{};
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (address.protocol() == QAbstractSocket::IPv6Protocol) {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&storage);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(quint16(port));
        const Q_IPV6ADDR a = address.toIPv6Address();
        memcpy(&in6->sin6_addr, &a, sizeof a);
        flags |= MHD_USE_IPv6;
    } else {
        auto *in4 = reinterpret_cast<sockaddr_in *>(&storage);
        in4->sin_family = AF_INET;
        in4->sin_port = htons(quint16(port));
        in4->sin_addr.s_addr = htonl(address.toIPv4Address());
    }
    m_daemon = MHD_start_daemon(
        flags, quint16(port), nullptr, nullptr, &HttpServer::onAccessThunk, this,
        MHD_OPTION_EXTERNAL_LOGGER, &HttpServer::onLogThunk, this, // first, so every message comes here
        MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr *>(&storage),
        MHD_OPTION_THREAD_POOL_SIZE, unsigned(m_limits.threads),
        MHD_OPTION_CONNECTION_LIMIT, unsigned(m_limits.connectionLimit),
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, unsigned(m_limits.perIpLimit),
        MHD_OPTION_CONNECTION_TIMEOUT, unsigned(m_limits.idleTimeoutSeconds),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, m_limits.connectionMemory,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
        MHD_OPTION_NOTIFY_COMPLETED, &HttpServer::onCompletedThunk, this,
        MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
        MHD_OPTION_END);
    if (!m_daemon)
        return fail(ErrorCode::Unavailable,
                    u"listen: cannot listen on %1:%2 (in use, or not an address of this host)"_s.arg(host).arg(port),
                    u"listen"_s);
    const MHD_DaemonInfo *info = MHD_get_daemon_info(m_daemon, MHD_DAEMON_INFO_BIND_PORT);
    m_port = info ? info->port : port;
    return {};
}

void HttpServer::quiesce()
{
    if (!m_daemon)
        return;
    const MHD_socket listening = MHD_quiesce_daemon(m_daemon);
    if (listening != MHD_INVALID_SOCKET)
        ::close(listening);
}

void HttpServer::answerParked(const HttpReply &reply)
{
    std::set<std::shared_ptr<PendingReply>> parked;
    {
        std::lock_guard lock(m_parkedMutex);
        parked = m_parked;
    }
    for (const auto &p : parked)
        p->send(reply);
}

void HttpServer::stop()
{
    if (m_daemon)
        MHD_stop_daemon(std::exchange(m_daemon, nullptr));
}

void HttpServer::setParked(const std::shared_ptr<PendingReply> &reply, bool on)
{
    std::lock_guard lock(m_parkedMutex);
    if (on)
        m_parked.insert(reply);
    else
        m_parked.erase(reply);
}

void HttpServer::resume(MHD_Connection *connection)
{
    MHD_resume_connection(connection);
}

MHD_Result HttpServer::onAccessThunk(void *cls, MHD_Connection *connection, const char *url, const char *method,
                                     const char *, const char *uploadData, size_t *uploadSize, void **context)
{
    return static_cast<HttpServer *>(cls)->onAccess(connection, url, method, uploadData, uploadSize, context);
}

void HttpServer::onCompletedThunk(void *cls, MHD_Connection *, void **context, MHD_RequestTerminationCode)
{
    auto *self = static_cast<HttpServer *>(cls);
    auto *ex = static_cast<Exchange *>(*context);
    if (!ex)
        return;
    *context = nullptr;
    self->releaseBody(*ex);
    if (ex->counted)
        --self->m_inFlight;
    if (ex->sent.result.isEmpty())
        ex->sent.result = u"client_gone"_s; // the client left before its answer
    self->m_handler.onDone(ex->head, ex->decision, ex->sent, double(ex->age.nsecsElapsed()) / 1e9);
    delete ex;
}

void HttpServer::onLogThunk(void *, const char *fmt, va_list ap)
{
    char line[512];
    std::vsnprintf(line, sizeof line, fmt, ap);
    QString text = QString::fromLocal8Bit(line).trimmed();
    // libmicrohttpd's own notices repeat per connection under a flood (limits, resets):
    // throttled by their first words.
    ServerLog::trouble(u"mhd:"_s + text.section(u' ', 0, 3), u"http: "_s + text);
}

MHD_Result HttpServer::queue(Exchange &ex, const HttpReply &reply)
{
    MHD_Response *response = MHD_create_response_from_buffer(size_t(reply.body.size()),
                                                             const_cast<char *>(reply.body.constData()),
                                                             MHD_RESPMEM_MUST_COPY);
    if (!response)
        return MHD_NO;
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, reply.contentType.constData());
    for (const auto &[name, value] : reply.headers)
        MHD_add_response_header(response, name.constData(), value.constData());
    const MHD_Result queued = MHD_queue_response(ex.head.connection, unsigned(reply.status), response);
    MHD_destroy_response(response);
    ex.sent = reply;
    ex.sent.body.clear();
    return queued;
}

MHD_Result HttpServer::onAccess(MHD_Connection *connection, const char *url, const char *method,
                                const char *uploadData, size_t *uploadSize, void **context)
{
    auto *ex = static_cast<Exchange *>(*context);
    if (!ex) {
        ex = new Exchange;
        *context = ex;
        ex->age.start();
        ex->counted = true;
        ++m_inFlight;
        ex->head.connection = connection;
        ex->head.method = method;
        ex->head.path = url;
        ex->decision = m_handler.onHead(ex->head);
        if (!ex->decision.reply)
            return MHD_YES;
        // A refusal waits for the body it refuses (read and dropped), so the client, still
        // sending, reads the answer instead of a reset; a body too large for that is cut off.
        bool ok = false;
        const qint64 length = ex->head.header(MHD_HTTP_HEADER_CONTENT_LENGTH).toLongLong(&ok);
        const bool bodyComing = (ok && length > 0) || !ex->head.header(MHD_HTTP_HEADER_TRANSFER_ENCODING).isEmpty();
        if (bodyComing && (!ok || length <= kDiscardLimit)) {
            ex->refused = true;
            return MHD_YES;
        }
        ex->answeredEarly = true;
        return queue(*ex, *ex->decision.reply);
    }
    if (ex->answeredEarly) {
        *uploadSize = 0; // the answer is out; the rest of the body is dropped
        return MHD_YES;
    }
    if (*uploadSize > 0) {
        const qint64 chunk = qint64(*uploadSize);
        *uploadSize = 0;
        if (ex->refused) {
            ex->dropped += chunk;
            if (ex->dropped > kDiscardLimit) {
                ex->answeredEarly = true;
                return queue(*ex, *ex->decision.reply);
            }
            return MHD_YES;
        }
        if (ex->body.size() + chunk > ex->decision.bodyLimit) {
            refuse(*ex, tooLarge(ex->decision.bodyLimit), chunk);
            return MHD_YES;
        }
        if (m_bodyBytes.fetch_add(chunk) + chunk > m_limits.bodyBudget) {
            m_bodyBytes -= chunk;
            ServerLog::trouble(u"body-budget"_s, u"http: request bodies in flight passed %1 bytes: answering 503"_s.arg(
                                                    m_limits.bodyBudget));
            refuse(*ex, busy(), chunk);
            return MHD_YES;
        }
        ex->charged += chunk;
        ex->body.append(uploadData, chunk);
        return MHD_YES;
    }
    if (ex->refused)
        return queue(*ex, *ex->decision.reply);
    if (!ex->pending) {
        // The body is complete: the handler answers now or parks the request.
        ex->pending = std::make_shared<PendingReply>(*this, connection);
        m_handler.onRequest(ex->head, ex->decision, std::move(ex->body), ex->pending);
        ex->body = QByteArray();
        releaseBody(*ex);
    }
    std::optional<HttpReply> reply;
    if (!ex->pending->takeOrPark(reply))
        return MHD_YES; // parked: resumed by PendingReply::send, which calls us again
    return queue(*ex, *reply);
}

void HttpServer::refuse(Exchange &ex, HttpReply reply, qint64 dropped)
{
    ex.refused = true;
    ex.dropped = ex.body.size() + dropped;
    ex.decision.reply = std::move(reply);
    ex.body = QByteArray();
    releaseBody(ex);
}

void HttpServer::releaseBody(Exchange &ex)
{
    m_bodyBytes -= ex.charged;
    ex.charged = 0;
}

} // namespace flashstock::server
