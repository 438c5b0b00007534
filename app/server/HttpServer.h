#pragma once

#include "Result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <cstdarg>
#include <optional>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <microhttpd.h>

namespace flashstock::server {

/// One HTTP answer. `result` is the word (or error code) for the access log and metrics.
struct HttpReply {
    int status = 200;
    QByteArray contentType = "application/json";
    QByteArray body;
    QList<std::pair<QByteArray, QByteArray>> headers; ///< extra headers (Retry-After, Allow, ...)
    QString result;
};

/// A request's line and headers, as the handler sees them before the body.
struct HttpHead {
    QByteArray method;
    QByteArray path;      ///< decoded, without the query string
    MHD_Connection *connection = nullptr;

    /// The peer's IP address (formatted on each call: for the access log, not per request).
    QString client() const;

    /// A request header (case-insensitive name); empty if absent. A view of libmicrohttpd's
    /// copy, valid until the request completes (no allocation per look-up).
    QByteArrayView header(const char *name) const;
};

/// What the handler decided when the headers arrived.
struct HeadDecision {
    std::optional<HttpReply> reply; ///< answer now (the body, if any, is not read)
    qint64 bodyLimit = 0;           ///< bytes of body accepted (more: 413)
    int route = -1;                 ///< the handler's own route id, handed back with the body
    QString routeName = QStringLiteral("unknown"); ///< for the access log and metrics
    QString principal;              ///< who is calling (token name), for the access log
    int scopes = 0;                 ///< the handler's own: what the caller may do (the API: its token's scopes)
    QString argument;               ///< the route's path argument (an order or SKU id)
};

class HttpServer;

/// Where a parked request's answer goes: held by whoever works on the request (a gate
/// dispatcher, a book writer) and answered from any thread, once. The first send() wins;
/// later ones are dropped (e.g. the drain deadline answered first).
class PendingReply : public std::enable_shared_from_this<PendingReply> {
public:
    /// `loop`: the request thread that owns `connection` (it is woken to resume it).
    PendingReply(HttpServer &server, int loop, MHD_Connection *connection);
    /// Leaves its request thread's parked list if it is still on it (never answered).
    ~PendingReply();
    PendingReply(const PendingReply &) = delete;
    PendingReply &operator=(const PendingReply &) = delete;
    /// Answers the request (resuming its connection if it was parked). Any thread.
    void send(HttpReply reply);
    /// Answers with what `make` returns, called on the request thread that writes the answer
    /// out (so a gate dispatcher hands over its result and leaves the JSON to that thread).
    /// Not called if the request was answered already or the client left. Any thread.
    void sendMade(std::function<HttpReply()> make);
    /// True once answered.
    bool answered() const;

    /// While one lives on a thread, the answers sent from that thread resume their
    /// connections at once and wake each request thread once, when the last WakeBatch of the
    /// thread ends, instead of once per answer (a gate dispatcher answering one pipeline's
    /// reserves: one eventfd write per request thread). Nests; stack only; the thread that
    /// made it.
    class WakeBatch {
    public:
        WakeBatch();
        ~WakeBatch();
        WakeBatch(const WakeBatch &) = delete;
        WakeBatch &operator=(const WakeBatch &) = delete;

    private:
        friend class HttpServer;
        WakeBatch *m_outer;
        std::vector<std::pair<HttpServer *, int>> m_loops; ///< request threads to wake (outermost only)
    };

private:
    friend class HttpServer;
    /// The request thread: true if the answer is there already; else marks it parked and
    /// suspends the connection (under the same lock send() takes, so no answer is missed).
    bool takeOrPark(std::optional<HttpReply> &out);
    /// send() and sendMade(): the first answer wins.
    void answer(std::optional<HttpReply> reply, std::function<HttpReply()> make);

    HttpServer &m_server;
    int m_loop;
    MHD_Connection *m_connection;
    mutable std::mutex m_mutex;
    std::optional<HttpReply> m_reply;
    std::function<HttpReply()> m_make; ///< the answer to make, if sendMade() gave it
    bool m_answered = false;
    bool m_parked = false;
    /// While m_parked: on its request thread's parked list (HttpServer::Loop::parked, under
    /// its lock), linked in place, so parking allocates nothing.
    PendingReply *m_prevParked = nullptr;
    PendingReply *m_nextParked = nullptr;
};

/// What the server does with requests (Api).
class HttpHandler {
public:
    virtual ~HttpHandler() = default;
    /// The request line and headers are in: refuse now or say how much body to read. Runs on
    /// a request thread: no I/O that can wait.
    virtual HeadDecision onHead(const HttpHead &head) = 0;
    /// The whole body is in: answer through `reply`, now or later from any thread.
    virtual void onRequest(const HttpHead &head, const HeadDecision &decision, QByteArray body,
                           std::shared_ptr<PendingReply> reply) = 0;
    /// The answer went out (or the client left): for the access log and metrics.
    virtual void onDone(const HttpHead &head, const HeadDecision &decision, const HttpReply &reply,
                        double seconds) = 0;
    /// A connection was refused at accept (`connection_limit`, `per_ip_limit`) or closed
    /// because its request did not arrive in time (`request_timeout`): for the metrics (the
    /// server's log has a line). On a request thread.
    virtual void onConnectionRefused(const QString &reason) = 0;
};

/// The limits of flashstock-server's HTTP side.
struct HttpLimits {
    int threads = 2;                    ///< request threads (one libmicrohttpd daemon on epoll each)
    int connectionLimit = 10000;        ///< open connections at once, all request threads together; more are refused at accept
    int perIpLimit = 1000;              ///< open connections from one client address (an IPv6 client's /64), all request threads together
    int idleTimeoutSeconds = 15;        ///< a connection silent this long is closed
    /// A request's line, headers and body must all be in this long after its first byte (a
    /// connection's first request: after its accept), however busy the sender looks (a
    /// header byte every few seconds is never idle); else 408 and the connection is closed.
    int requestTimeoutSeconds = 10;
    /// Per connection: request line and headers (more: 414 / 431). libmicrohttpd 0.9.75 zeroes
    /// this much on every request of a keep-alive connection (MHD_pool_reset), so it stays
    /// small: 8 KiB (docs/benchmarks.md).
    size_t connectionMemory = 8 * 1024;
    qint64 bodyBudget = 256LL << 20;    ///< bytes of request bodies being received at once, all connections
};

/// Owns the request threads: each runs one libmicrohttpd daemon (epoll, external polling) on
/// the one listening socket, in its own loop: it waits on the daemon's epoll descriptor and
/// its own wake-up eventfd, then lets the daemon do its work without waiting (MHD_run).
/// libmicrohttpd 0.9.75's own polling threads are not used: after an epoll_wait that returns
/// a full buffer (128 events) their loop waits again, with the timeout it took before the
/// first wait (up to the idle timeout), so 128 connections whose requests arrived together
/// would wait unread until some other socket moved or that timeout came. A request's
/// headers and body arrive on its connection's request thread; a handler that needs the
/// gate or the book parks the request (suspend) and a PendingReply resumes it and wakes that
/// thread. Stop order: quiesce() (no new connections), then answerParked() for what is
/// left, then stop().
class HttpServer {
public:
    /// A refused request's body up to this size is read (and dropped) before the answer goes
    /// out, so the client sees the answer; a larger one is cut off with the connection.
    static constexpr qint64 kDiscardLimit = 2LL << 20;

    HttpServer(HttpHandler &handler, HttpLimits limits);
    ~HttpServer();

    /// Listens on `host:port` (an IPv4 or IPv6 literal; port 0 picks one). Unavailable if
    /// the address cannot be bound.
    [[nodiscard]] Result<void> start(const QString &host, int port);
    /// The port listened on (after start).
    int port() const { return m_port; }
    /// Stops accepting connections (the listening socket is closed); open ones are served.
    void quiesce();
    /// Requests received and not answered yet.
    qint64 inFlight() const { return m_inFlight.load(); }
    /// Answers every parked request with `reply` (a drain that ran out of time).
    void answerParked(const HttpReply &reply);
    /// Stops the daemon (every connection closed). Parked requests must be answered first.
    void stop();

private:
    friend class PendingReply;
    struct Exchange;
    struct Connection;
    struct Loop;
    /// A request thread's loop, until stop().
    void run(Loop &loop);
    /// Closes, on `loop`'s thread, each connection whose request is not in within the request
    /// timeout (answering 408 if nothing else was answered on it yet). `nowMs`: steady clock.
    void sweep(Loop &loop, qint64 nowMs);
    static MHD_Result onAcceptThunk(void *cls, const sockaddr *address, socklen_t length);
    static void onConnectionThunk(void *cls, MHD_Connection *connection, void **socketContext,
                                  MHD_ConnectionNotificationCode code);
    static void *onRequestLineThunk(void *cls, const char *uri, MHD_Connection *connection);
    static MHD_Result onAccessThunk(void *cls, MHD_Connection *connection, const char *url, const char *method,
                             const char *version, const char *uploadData, size_t *uploadSize, void **context);
    static void onCompletedThunk(void *cls, MHD_Connection *connection, void **context, MHD_RequestTerminationCode toe);
    static void onLogThunk(void *cls, const char *fmt, va_list ap);
    MHD_Result onAccess(int loop, MHD_Connection *connection, const char *url, const char *method, const char *version,
                        const char *uploadData, size_t *uploadSize, void **context);
    MHD_Result queue(Exchange &ex, const HttpReply &reply);
    void resume(int loop, MHD_Connection *connection);
    /// Wakes request thread `loop` (now, or when the thread's WakeBatch ends).
    void wake(int loop);
    /// Puts `reply` on its request thread's parked list (`on`) or takes it off. Any thread.
    void setParked(PendingReply &reply, bool on);
    /// Answers `reply` once the rest of the body is in (dropped as it comes).
    void refuse(Exchange &ex, HttpReply reply, qint64 dropped);
    /// Gives the body's bytes back to the body budget.
    void releaseBody(Exchange &ex);

    HttpHandler &m_handler;
    HttpLimits m_limits;
    std::vector<std::unique_ptr<Loop>> m_loops; ///< one per request thread
    int m_listenFd = -1;                         ///< shared by every loop's daemon; closed by us
    int m_port = 0;
    std::mutex m_perIpMutex;           ///< guards m_perIp and m_open
    std::map<QByteArray, int> m_perIp; ///< open connections by client key (clientKey())
    int m_open = 0;                    ///< open connections, all request threads
    std::atomic<qint64> m_inFlight{0};
    std::atomic<qint64> m_bodyBytes{0};
};

} // namespace flashstock::server
