#pragma once

#include <QByteArray>
#include <QList>
#include <QTcpServer>
#include <QUrl>

namespace flashstock::test {

/// A minimal HTTP endpoint on 127.0.0.1 that records the body of every request and answers
/// each with the status set by setStatus() (for alert webhooks). Serves while the calling
/// thread's event loop runs; one request per connection.
class HttpSink {
public:
    HttpSink();
    /// Listens on a free port; false if it cannot.
    bool listen();
    /// `http://127.0.0.1:PORT/alerts`.
    QUrl url() const;
    /// Status of the answers from now on (default 200).
    void setStatus(int status) { m_status = status; }
    /// Bodies of the requests received so far, oldest first.
    const QList<QByteArray> &bodies() const { return m_bodies; }

private:
    void serve(QTcpSocket *socket);

    QTcpServer m_server;
    int m_status = 200;
    QList<QByteArray> m_bodies;
};

} // namespace flashstock::test
