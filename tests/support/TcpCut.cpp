#include "support/TcpCut.h"

#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>

#include <atomic>

namespace flashstock::test {

/// The relay's QObject side: every member is touched on its own thread only.
class TcpCut::Relay : public QObject {
public:
    Relay(QString host, int port) : m_host(std::move(host)), m_port(port), m_server(this) {}

    bool listen()
    {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *client = m_server.nextPendingConnection())
                relay(client);
        });
        if (!m_server.listen(QHostAddress::LocalHost, 0))
            return false;
        m_listening = m_server.serverPort();
        return true;
    }

    int cut()
    {
        int count = 0;
        for (const auto &[client, server] : std::as_const(m_pairs)) {
            count += client || server ? 1 : 0;
            if (client)
                client->abort();
            if (server)
                server->abort();
        }
        m_pairs.clear();
        return count;
    }

    std::atomic<int> m_listening{0};
    std::atomic<int> m_accepted{0};

private:
    void relay(QTcpSocket *client)
    {
        ++m_accepted;
        auto *server = new QTcpSocket(client);
        client->setParent(this);
        auto pipe = [](QTcpSocket *from, QTcpSocket *to) {
            QObject::connect(from, &QTcpSocket::readyRead, to, [from, to] { to->write(from->readAll()); });
            QObject::connect(from, &QTcpSocket::disconnected, to, [to] { to->disconnectFromHost(); });
        };
        // What the client sends before the server answers waits in the client socket's buffer.
        connect(server, &QTcpSocket::connected, client, [client, server, pipe] {
            pipe(client, server);
            pipe(server, client);
            if (client->bytesAvailable() > 0)
                server->write(client->readAll());
        });
        connect(server, &QTcpSocket::errorOccurred, client, [client] { client->abort(); });
        connect(client, &QTcpSocket::disconnected, client, &QObject::deleteLater);
        server->connectToHost(m_host, quint16(m_port));
        m_pairs.append({QPointer<QTcpSocket>(client), QPointer<QTcpSocket>(server)});
    }

    QString m_host;
    int m_port;
    QTcpServer m_server; ///< a child, so it moves to the relay's thread with it
    QList<std::pair<QPointer<QTcpSocket>, QPointer<QTcpSocket>>> m_pairs;
};

TcpCut::TcpCut(QString targetHost, int targetPort)
    : m_relay(new Relay(std::move(targetHost), targetPort))
{
    m_relay->moveToThread(&m_thread);
    QObject::connect(&m_thread, &QThread::finished, m_relay, &QObject::deleteLater);
    m_thread.start();
}

TcpCut::~TcpCut()
{
    m_thread.quit();
    m_thread.wait();
}

bool TcpCut::start()
{
    bool ok = false;
    QMetaObject::invokeMethod(m_relay, [&] { ok = m_relay->listen(); }, Qt::BlockingQueuedConnection);
    return ok;
}

int TcpCut::port() const { return m_relay->m_listening.load(); }

int TcpCut::cut()
{
    int count = 0;
    QMetaObject::invokeMethod(m_relay, [&] { count = m_relay->cut(); }, Qt::BlockingQueuedConnection);
    return count;
}

int TcpCut::accepted() const { return m_relay->m_accepted.load(); }

} // namespace flashstock::test
