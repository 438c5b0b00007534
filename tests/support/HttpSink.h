#pragma once

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QTcpServer>
#include <QUrl>

namespace flashstock::test {

/// A minimal HTTP endpoint on 127.0.0.1 that records the headers and body of every request
/// and answers each with the status set by setStatus() (for alert webhooks). Serves while
/// the calling thread's event loop runs; one request per connection.
class HttpSink {
public:
    /// One request received.
    struct Request {
        QMap<QByteArray, QByteArray> headers; ///< by lower-case name
        QByteArray body;
    };

    HttpSink();
    /// Listens on a free port; false if it cannot.
    bool listen();
    /// `http://127.0.0.1:PORT/alerts`.
    QUrl url() const;
    /// Status of the answers from now on (default 200).
    void setStatus(int status) { m_status = status; }
    /// Bodies of the requests received so far, oldest first.
    const QList<QByteArray> &bodies() const { return m_bodies; }
    /// The requests received so far, oldest first.
    const QList<Request> &requests() const { return m_requests; }

private:
    void serve(QTcpSocket *socket);

    QTcpServer m_server;
    int m_status = 200;
    QList<QByteArray> m_bodies;
    QList<Request> m_requests;
};

} // namespace flashstock::test
