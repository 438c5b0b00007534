#pragma once

#include "ServerOptions.h"

namespace flashstock::server {

/// flashstock-server from start to exit: opens the engine's threads (book writers, gate
/// dispatcher, housekeeping), serves API v1 until SIGTERM or SIGINT, then drains: no new
/// connections, new requests on open ones get 503, what is in flight is answered (at most
/// 10 s), and everything stops. Call from the main thread, with SIGTERM and SIGINT blocked
/// in every thread (run() waits for them with sigwait).
class Server {
public:
    explicit Server(ServerOptions options);
    /// Returns the exit code: 0 after a drain, 1 if the server could not start (the reason
    /// is logged), 2 for bad settings.
    int run();

private:
    ServerOptions m_o;
};

} // namespace flashstock::server
