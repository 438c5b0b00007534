#include "AlertSender.h"

#include <QDeadlineTimer>
#include <QEventLoop>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

using namespace Qt::StringLiterals;

namespace flashstock {

AlertSender::AlertSender(QUrl url, int timeoutMs, int attempts, QObject *parent)
    : QObject(parent)
    , m_url(std::move(url))
    , m_timeoutMs(timeoutMs)
    , m_attempts(qMax(1, attempts))
    , m_nam(new QNetworkAccessManager(this))
{
}

AlertSender::~AlertSender() = default;

void AlertSender::post(const QJsonObject &alert, std::function<void(bool delivered)> done)
{
    ++m_inFlight;
    attempt(QJsonDocument(alert).toJson(QJsonDocument::Compact), 1, done);
}

void AlertSender::attempt(const QByteArray &body, int attemptNo, const std::function<void(bool)> &done)
{
    QNetworkRequest request(m_url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, u"application/json"_s);
    request.setTransferTimeout(m_timeoutMs);
    QNetworkReply *reply = m_nam->post(request, body);
    connect(reply, &QNetworkReply::finished, this, [this, reply, body, attemptNo, done] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (reply->error() == QNetworkReply::NoError && status >= 200 && status < 300) {
            ++m_delivered;
            --m_inFlight;
            if (done)
                done(true);
            return;
        }
        if (attemptNo >= m_attempts) {
            qWarning("alert not delivered to %s after %d attempts: %s", qPrintable(m_url.toString()), attemptNo,
                     qPrintable(reply->errorString()));
            ++m_failed;
            --m_inFlight;
            if (done)
                done(false);
            return;
        }
        // Backoff 250 ms, 500 ms, ...
        QTimer::singleShot(250 * (1 << (attemptNo - 1)), this,
                           [this, body, attemptNo, done] { attempt(body, attemptNo + 1, done); });
    });
}

void AlertSender::flush(qint64 maxMs)
{
    QDeadlineTimer deadline(maxMs);
    while (m_inFlight > 0 && !deadline.hasExpired()) {
        QEventLoop loop;
        QTimer::singleShot(20, &loop, &QEventLoop::quit);
        loop.exec();
    }
}

} // namespace flashstock
