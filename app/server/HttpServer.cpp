#include "HttpServer.h"
#include "HttpServerParts.h"

#include "ServerLog.h"

#include <QHostAddress>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

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

/// The outermost WakeBatch of this thread, if one lives.
thread_local PendingReply::WakeBatch *t_wakeBatch = nullptr;

} // namespace

QString HttpHead::client() const
{
    const MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr)
        return {};
    return QHostAddress(info->client_addr).toString();
}

QByteArrayView HttpHead::header(const char *name) const
{
    return QByteArrayView(MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name));
}

PendingReply::PendingReply(HttpServer &server, int loop, MHD_Connection *connection)
    : m_server(server)
    , m_loop(loop)
    , m_connection(connection)
{
}

PendingReply::~PendingReply()
{
    if (m_parked) // nobody else holds it now: no lock needed to read
        m_server.setParked(*this, false);
}

PendingReply::WakeBatch::WakeBatch()
    : m_outer(t_wakeBatch)
{
    if (!m_outer)
        t_wakeBatch = this;
}

PendingReply::WakeBatch::~WakeBatch()
{
    if (m_outer)
        return;
    t_wakeBatch = nullptr;
    for (const auto &[server, loop] : m_loops)
        server->wake(loop);
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
        m_server.setParked(*this, false);
        m_server.resume(m_loop, m_connection);
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
    m_server.setParked(*this, true);
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
    // No MHD_USE_INTERNAL_POLLING_THREAD: run() polls each daemon (see the class comment).
    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
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
    const int threads = std::max(1, m_limits.threads);
    for (int i = 0; i < threads; ++i) {
        auto loop = std::make_unique<Loop>();
        loop->server = this;
        loop->index = i;
        // The first daemon binds the address; the others share its listening socket.
        const bool first = m_listenFd < 0;
        const MHD_OptionItem options[] = {
            {MHD_OPTION_EXTERNAL_LOGGER, intptr_t(&HttpServer::onLogThunk), this}, // first: every message comes here
            first ? MHD_OptionItem{MHD_OPTION_SOCK_ADDR, 0, &storage}
                  : MHD_OptionItem{MHD_OPTION_LISTEN_SOCKET, m_listenFd, nullptr},
            // The limit is kept over every request thread together, at accept (onAcceptThunk),
            // with a log line and a count; each daemon's own is the whole of it, a backstop
            // (split, a thread at its share would stop accepting, silently, while another had room).
            {MHD_OPTION_CONNECTION_LIMIT, intptr_t(m_limits.connectionLimit), nullptr},
            {MHD_OPTION_CONNECTION_TIMEOUT, intptr_t(m_limits.idleTimeoutSeconds), nullptr},
            {MHD_OPTION_CONNECTION_MEMORY_LIMIT, intptr_t(m_limits.connectionMemory), nullptr},
            {MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, nullptr},
            {MHD_OPTION_NOTIFY_COMPLETED, intptr_t(&HttpServer::onCompletedThunk), this},
            {MHD_OPTION_NOTIFY_CONNECTION, intptr_t(&HttpServer::onConnectionThunk), loop.get()},
            {MHD_OPTION_URI_LOG_CALLBACK, intptr_t(&HttpServer::onRequestLineThunk), nullptr},
            {MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1, nullptr},
            {MHD_OPTION_END, 0, nullptr},
        };
        loop->daemon = MHD_start_daemon(flags, quint16(port), &HttpServer::onAcceptThunk, this,
                                        &HttpServer::onAccessThunk, loop.get(), MHD_OPTION_ARRAY, options,
                                        MHD_OPTION_END);
        if (!loop->daemon) {
            stop();
            return fail(ErrorCode::Unavailable,
                        u"listen: cannot listen on %1:%2 (in use, or not an address of this host)"_s.arg(host).arg(port),
                        u"listen"_s);
        }
        if (first) {
            const MHD_DaemonInfo *fd = MHD_get_daemon_info(loop->daemon, MHD_DAEMON_INFO_LISTEN_FD);
            m_listenFd = fd ? fd->listen_fd : -1;
            const MHD_DaemonInfo *info = MHD_get_daemon_info(loop->daemon, MHD_DAEMON_INFO_BIND_PORT);
            m_port = info ? info->port : port;
        }
        const MHD_DaemonInfo *epoll = MHD_get_daemon_info(loop->daemon, MHD_DAEMON_INFO_EPOLL_FD);
        loop->wakeFd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        loop->epollFd = epoll_create1(EPOLL_CLOEXEC);
        epoll_event daemonEvent{EPOLLIN, {.u32 = 0}};
        epoll_event wakeEvent{EPOLLIN, {.u32 = 1}};
        const bool ready = epoll && loop->wakeFd >= 0 && loop->epollFd >= 0 && m_listenFd >= 0
            && epoll_ctl(loop->epollFd, EPOLL_CTL_ADD, epoll->epoll_fd, &daemonEvent) == 0
            && epoll_ctl(loop->epollFd, EPOLL_CTL_ADD, loop->wakeFd, &wakeEvent) == 0;
        m_loops.push_back(std::move(loop));
        if (!ready) {
            stop();
            return fail(ErrorCode::Unavailable, u"listen: cannot set up request thread %1: %2"_s.arg(i).arg(
                                                    QString::fromLocal8Bit(strerror(errno))),
                        u"listen"_s);
        }
    }
    // Every loop exists before the first runs: resume() reads m_loops from other threads.
    for (auto &loop : m_loops)
        loop->thread = std::thread([this, l = loop.get()] { run(*l); });
    return {};
}

void HttpServer::run(Loop &loop)
{
    const QByteArray name = "request " + QByteArray::number(loop.index);
    pthread_setname_np(pthread_self(), name.constData());
    epoll_event events[2];
    for (;;) {
        MHD_UNSIGNED_LONG_LONG due = 0;
        qint64 timeout = MHD_get_timeout(loop.daemon, &due) == MHD_YES ? qint64(std::min<MHD_UNSIGNED_LONG_LONG>(due, INT_MAX))
                                                                      : -1;
        if (loop.connections) {
            const qint64 toSweep = std::max<qint64>(0, loop.nextSweepMs - steadyMs());
            timeout = timeout < 0 ? toSweep : std::min(timeout, toSweep);
        }
        const int n = epoll_wait(loop.epollFd, events, 2, int(timeout));
        for (int i = 0; i < n; ++i) {
            if (events[i].data.u32 == 1) {
                uint64_t count = 0;
                [[maybe_unused]] const ssize_t r = ::read(loop.wakeFd, &count, sizeof count);
            }
        }
        if (loop.stopping.load())
            return;
        if (loop.quiesceAsked.exchange(false)) {
            MHD_quiesce_daemon(loop.daemon); // the socket is closed once, by quiesce()
            loop.quiesced.set_value();
        }
        // Before MHD_run, so the connections it closes are seen by this run.
        if (const qint64 now = steadyMs(); now >= loop.nextSweepMs) {
            sweep(loop, now);
            loop.nextSweepMs = now + kSweepMs;
        }
        // Never waits: each of its epoll_waits has a timeout of 0 (this loop waited above).
        MHD_run(loop.daemon);
    }
}

void HttpServer::quiesce()
{
    if (m_listenFd < 0)
        return;
    for (auto &loop : m_loops) {
        loop->quiesceAsked = true;
        loop->wake();
    }
    for (auto &loop : m_loops)
        loop->quiesced.get_future().wait();
    ::close(std::exchange(m_listenFd, -1));
}

void HttpServer::answerParked(const HttpReply &reply)
{
    std::vector<std::shared_ptr<PendingReply>> parked;
    for (auto &loop : m_loops) {
        std::lock_guard lock(loop->parkedMutex);
        for (PendingReply *p = loop->parked; p; p = p->m_nextParked)
            if (auto alive = p->weak_from_this().lock()) // not one being destroyed
                parked.push_back(std::move(alive));
    }
    for (const auto &p : parked)
        p->send(reply);
}

void HttpServer::stop()
{
    for (auto &loop : m_loops) {
        loop->stopping = true;
        loop->wake();
    }
    for (auto &loop : m_loops)
        if (loop->thread.joinable())
            loop->thread.join();
    // The loops are gone: the daemons let go of the shared listening socket here, and it is
    // closed once (each daemon would close it otherwise).
    if (m_listenFd >= 0) {
        for (auto &loop : m_loops)
            if (loop->daemon)
                MHD_quiesce_daemon(loop->daemon);
        ::close(std::exchange(m_listenFd, -1));
    }
    // The loops stay (until the destructor): a late resume only wakes a loop that is gone.
    for (auto &loop : m_loops)
        if (loop->daemon)
            MHD_stop_daemon(std::exchange(loop->daemon, nullptr));
}

void HttpServer::setParked(PendingReply &reply, bool on)
{
    Loop &loop = *m_loops[size_t(reply.m_loop)];
    std::lock_guard lock(loop.parkedMutex);
    if (on) {
        reply.m_prevParked = nullptr;
        reply.m_nextParked = std::exchange(loop.parked, &reply);
        if (reply.m_nextParked)
            reply.m_nextParked->m_prevParked = &reply;
        return;
    }
    (reply.m_prevParked ? reply.m_prevParked->m_nextParked : loop.parked) = reply.m_nextParked;
    if (reply.m_nextParked)
        reply.m_nextParked->m_prevParked = reply.m_prevParked;
    reply.m_prevParked = reply.m_nextParked = nullptr;
}

void HttpServer::resume(int loop, MHD_Connection *connection)
{
    MHD_resume_connection(connection);
    // After the resume, so the loop's MHD_run sees it.
    if (PendingReply::WakeBatch *batch = t_wakeBatch) {
        const std::pair<HttpServer *, int> key{this, loop};
        if (std::find(batch->m_loops.cbegin(), batch->m_loops.cend(), key) == batch->m_loops.cend())
            batch->m_loops.push_back(key);
        return;
    }
    wake(loop);
}

void HttpServer::wake(int loop)
{
    m_loops[size_t(loop)]->wake();
}

MHD_Result HttpServer::onAccessThunk(void *cls, MHD_Connection *connection, const char *url, const char *method,
                                     const char *version, const char *uploadData, size_t *uploadSize, void **context)
{
    const auto *loop = static_cast<Loop *>(cls);
    return loop->server->onAccess(loop->index, connection, url, method, version, uploadData, uploadSize, context);
}

void HttpServer::onCompletedThunk(void *cls, MHD_Connection *connection, void **context, MHD_RequestTerminationCode)
{
    auto *self = static_cast<HttpServer *>(cls);
    if (Connection *c = Connection::of(connection)) {
        c->exchange = nullptr;
        c->state = Connection::State::Waiting;
        c->waitingSinceMs = steadyMs();
    }
    auto *ex = static_cast<Exchange *>(*context);
    if (!ex)
        return;
    *context = nullptr;
    self->releaseBody(*ex);
    if (ex->counted)
        --self->m_inFlight;
    // A request libmicrohttpd refused before its headers were in (414, 431, a bad length) was
    // never the handler's.
    if (ex->started || ex->sent.status == MHD_HTTP_REQUEST_TIMEOUT) {
        if (ex->sent.result.isEmpty())
            ex->sent.result = u"client_gone"_s; // the client left before its answer
        self->m_handler.onDone(ex->head, ex->decision, ex->sent, double(ex->age.nsecsElapsed()) / 1e9);
    }
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
    if (Connection *c = Connection::of(ex.head.connection)) // answered: the request timeout no longer runs
        c->state = Connection::State::Ours;
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

MHD_Result HttpServer::onAccess(int loop, MHD_Connection *connection, const char *url, const char *method,
                                const char *version, const char *uploadData, size_t *uploadSize, void **context)
{
    auto *ex = static_cast<Exchange *>(*context);
    if (!ex) { // no request line was seen (onRequestLineThunk): its framing is refused below
        ex = new Exchange;
        *context = ex;
    }
    if (!ex->started) {
        ex->started = true;
        ex->age.start();
        ex->counted = true;
        ++m_inFlight;
        ex->head.connection = connection;
        ex->head.method = method;
        ex->head.path = url;
        // Where this request's body ends is not known for sure: answered now, with the
        // connection closed, so nothing after it is read as a request.
        if (auto refusal = framingRefusal(connection, method, url, version, ex->target)) {
            if (!ex->target.withNul.isEmpty()) // the decoded path stops at its NUL
                ex->head.path = ex->target.withNul;
            ex->answeredEarly = true;
            return queue(*ex, *refusal);
        }
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
        if (Connection *c = Connection::of(connection))
            c->state = Connection::State::Ours;
        ex->pending = std::make_shared<PendingReply>(*this, loop, connection);
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
