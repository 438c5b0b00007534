#pragma once

#include <QThread>

#include <memory>

class QTcpServer;

namespace flashstock::test {

/// A TCP relay on 127.0.0.1 in front of a real server, for a test that must lose that
/// server the way a dead machine is lost: cut() resets every relayed connection at once
/// (the client sees its connection reset, with no goodbye from the server), while the
/// server itself runs on for the other suites that share it. New connections are relayed
/// again right after. The relay runs on a thread of its own; every method may be called from
/// any thread. Stopped by the destructor.
class TcpCut {
public:
    TcpCut(QString targetHost, int targetPort);
    ~TcpCut();
    TcpCut(const TcpCut &) = delete;
    TcpCut &operator=(const TcpCut &) = delete;

    /// Starts listening on a free port; false if it cannot.
    bool start();
    /// The port it listens on (0 before start()).
    int port() const;
    /// Resets every connection relayed so far (both sides); returns how many it cut.
    int cut();
    /// Connections relayed so far, cut or not.
    int accepted() const;

private:
    class Relay;
    QThread m_thread;
    Relay *m_relay = nullptr; ///< lives on m_thread, deleted there
};

} // namespace flashstock::test
