#pragma once

// The parts of HttpServer that its two source files share (HttpServer.cpp: the request
// threads and their requests; HttpConnections.cpp: accepting, counting and timing out
// connections). Private to them.

#include "HttpFraming.h"
#include "HttpServer.h"

#include <QElapsedTimer>

#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

namespace flashstock::server {

/// How often a request thread looks for requests past the request timeout, ms.
inline constexpr qint64 kSweepMs = 500;

/// The steady clock, ms.
inline qint64 steadyMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// One request thread: its libmicrohttpd daemon, the epoll set it waits on (the daemon's own
/// epoll descriptor and the wake-up eventfd) and the thread.
struct HttpServer::Loop {
    HttpServer *server = nullptr;
    int index = 0;
    MHD_Daemon *daemon = nullptr;
    int wakeFd = -1;
    int epollFd = -1;
    std::thread thread;
    std::atomic<bool> stopping{false};
    std::atomic<bool> quiesceAsked{false};
    std::promise<void> quiesced; ///< set by the thread once its daemon has let go of the listening socket
    std::mutex parkedMutex;
    PendingReply *parked = nullptr; ///< this thread's requests suspended now (linked through PendingReply)
    Connection *connections = nullptr; ///< this thread's open connections (this thread only)
    qint64 nextSweepMs = 0;            ///< steady clock

    ~Loop()
    {
        if (epollFd >= 0)
            ::close(epollFd);
        if (wakeFd >= 0)
            ::close(wakeFd);
    }
    /// Any thread: the loop runs its daemon again (a resumed connection, a quiesce, a stop).
    void wake() const
    {
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t n = ::write(wakeFd, &one, sizeof one);
    }
};

/// One open connection (libmicrohttpd's socket context), on its request thread's list from
/// its accept to its close. Touched only by that thread.
struct HttpServer::Connection {
    enum class State {
        Arriving, ///< a request is coming in, since requestStartMs: the request timeout runs
        Ours,     ///< its request is in, or answered or cut before: the server has it until it completes
        Waiting,  ///< between requests (keep-alive), since waitingSinceMs: the idle timeout runs
    };
    Loop *loop = nullptr;
    MHD_Connection *mhd = nullptr;
    int fd = -1;
    QByteArray key; ///< clientKey(); empty: not counted per address
    State state = State::Arriving;
    qint64 requestStartMs = 0;
    qint64 waitingSinceMs = 0;
    Exchange *exchange = nullptr; ///< the request under way, from its request line to its completion
    Connection *prev = nullptr;
    Connection *next = nullptr;

    /// The Connection of `connection` (nullptr before its accept notice).
    static Connection *of(MHD_Connection *connection)
    {
        const MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        return info ? static_cast<Connection *>(info->socket_context) : nullptr;
    }
};

/// One request on one connection, from its request line to MHD's completion notice.
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
    bool started = false;       ///< its headers are in: the handler saw them (or its framing was refused)
    RawTarget target;           ///< its request target as received
    QElapsedTimer age;
};

} // namespace flashstock::server
