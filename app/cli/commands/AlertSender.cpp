#include "AlertSender.h"

#include "BuildInfo.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QEventLoop>
#include <QJsonDocument>
#include <QMessageAuthenticationCode>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

using namespace Qt::StringLiterals;

namespace flashstock {

AlertSender::AlertSender(QUrl url, QByteArray secret, int timeoutMs, int attempts, QObject *parent)
    : QObject(parent)
    , m_url(std::move(url))
    , m_secret(std::move(secret))
    , m_timeoutMs(timeoutMs)
    , m_attempts(qMax(1, attempts))
    , m_nam(new QNetworkAccessManager(this))
{
}

AlertSender::~AlertSender() = default;

QByteArray AlertSender::signature(const QByteArray &secret, qint64 timestamp, const QByteArray &body)
{
    return "sha256="
        + QMessageAuthenticationCode::hash(QByteArray::number(timestamp) + '.' + body, secret, QCryptographicHash::Sha256)
              .toHex();
}

void AlertSender::post(const QJsonObject &alert, std::function<void(bool delivered, const QString &error)> done)
{
    ++m_inFlight;
    attempt(QJsonDocument(alert).toJson(QJsonDocument::Compact), 1, done);
}

void AlertSender::attempt(const QByteArray &body, int attemptNo, const std::function<void(bool, const QString &)> &done)
{
    QNetworkRequest request(m_url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, u"application/json"_s);
    request.setHeader(QNetworkRequest::UserAgentHeader, u"FlashStock/"_s + buildVersion());
    if (!m_secret.isEmpty()) {
        // Signed per attempt: a retry carries its own time.
        const qint64 now = QDateTime::currentSecsSinceEpoch();
        request.setRawHeader("X-FlashStock-Timestamp", QByteArray::number(now));
        request.setRawHeader("X-FlashStock-Signature", signature(m_secret, now, body));
    }
    request.setTransferTimeout(m_timeoutMs);
    QNetworkReply *reply = m_nam->post(request, body);
    connect(reply, &QNetworkReply::finished, this, [this, reply, body, attemptNo, done] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (reply->error() == QNetworkReply::NoError && status >= 200 && status < 300) {
            ++m_delivered;
            --m_inFlight;
            if (done)
                done(true, {});
            return;
        }
        if (attemptNo >= m_attempts) {
            // The URL as people may see it: no password (the reply's own text may hold it).
            const QString where = m_url.toDisplayString(QUrl::RemoveUserInfo);
            const QString what = status > 0 ? u"HTTP %1"_s.arg(status)
                                            : reply->errorString().replace(m_url.toString(), where);
            const QString why = u"not delivered to %1 after %2 attempts: %3"_s.arg(where, QString::number(attemptNo),
                                                                                   what);
            qWarning("alert %s", qPrintable(why));
            ++m_failed;
            --m_inFlight;
            if (done)
                done(false, why);
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
