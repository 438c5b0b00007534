#include "HttpSink.h"

#include <QTcpSocket>

#include <memory>

namespace flashstock::test {

HttpSink::HttpSink()
{
    QObject::connect(&m_server, &QTcpServer::newConnection, &m_server, [this] {
        while (QTcpSocket *socket = m_server.nextPendingConnection())
            serve(socket);
    });
}

bool HttpSink::listen()
{
    return m_server.listen(QHostAddress::LocalHost, 0);
}

QUrl HttpSink::url() const
{
    return QUrl(QStringLiteral("http://127.0.0.1:%1/alerts").arg(m_server.serverPort()));
}

void HttpSink::serve(QTcpSocket *socket)
{
    QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    auto request = std::make_shared<QByteArray>(); // the bytes so far
    QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket, request] {
        QByteArray &buffer = *request;
        buffer += socket->readAll();
        const qsizetype headerEnd = buffer.indexOf("\r\n\r\n");
        if (headerEnd < 0)
            return;
        Request received;
        for (const QByteArray &line : buffer.left(headerEnd).split('\n')) {
            const qsizetype colon = line.indexOf(':');
            if (colon > 0)
                received.headers.insert(line.left(colon).trimmed().toLower(), line.mid(colon + 1).trimmed());
        }
        const qsizetype length = received.headers.value("content-length").toLongLong();
        if (buffer.size() < headerEnd + 4 + length)
            return;
        received.body = buffer.mid(headerEnd + 4, length);
        m_bodies << received.body;
        m_requests << received;
        socket->write(QByteArray("HTTP/1.1 ") + QByteArray::number(m_status)
                      + " Sink\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        socket->disconnectFromHost();
    });
}

} // namespace flashstock::test
