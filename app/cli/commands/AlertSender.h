#pragma once

#include <QJsonObject>
#include <QObject>
#include <QUrl>

#include <functional>

class QNetworkAccessManager;

namespace flashstock {

/// Posts JSON alerts (one per discrepancy that needs a person) to `--alert-url`.
/// Each POST has a transfer timeout and is retried a bounded number of times with backoff;
/// sending never blocks: work progresses while the Qt event loop runs (StopSignal::wait,
/// flush). Every POST carries `User-Agent: FlashStock/VERSION` and, with a secret,
/// `X-FlashStock-Timestamp: T` (Unix seconds) and `X-FlashStock-Signature: sha256=HEX`,
/// HEX = HMAC-SHA256(secret, T + "." + body) in lower-case hex, so a receiver can reject
/// forgeries and replays. Main thread only.
class AlertSender : public QObject {
    Q_OBJECT
public:
    /// `secret`: the signing key (empty: posts are not signed). `timeoutMs` per attempt;
    /// `attempts` in all (>= 1).
    explicit AlertSender(QUrl url, QByteArray secret = {}, int timeoutMs = 5000, int attempts = 3,
                         QObject *parent = nullptr);
    ~AlertSender() override;

    /// The signature header's value for `body` sent at `timestamp` (Unix seconds) with `secret`.
    static QByteArray signature(const QByteArray &secret, qint64 timestamp, const QByteArray &body);

    /// Queues one alert and starts sending it. `done` (optional) is called once, on this
    /// thread: delivered (a 2xx answered), or not and why (after every attempt failed).
    void post(const QJsonObject &alert, std::function<void(bool delivered, const QString &error)> done = {});
    /// Runs the event loop until every alert is delivered or given up, or `maxMs` passed.
    void flush(qint64 maxMs);
    /// Alerts delivered (2xx) and given up so far.
    int delivered() const { return m_delivered; }
    int failed() const { return m_failed; }
    /// Alerts still being sent.
    int inFlight() const { return m_inFlight; }

private:
    void attempt(const QByteArray &body, int attemptNo, const std::function<void(bool, const QString &)> &done);

    QUrl m_url;
    QByteArray m_secret;
    int m_timeoutMs;
    int m_attempts;
    QNetworkAccessManager *m_nam;
    int m_delivered = 0;
    int m_failed = 0;
    int m_inFlight = 0;
};

} // namespace flashstock
