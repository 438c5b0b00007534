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
/// flush). Main thread only.
class AlertSender : public QObject {
    Q_OBJECT
public:
    /// `timeoutMs` per attempt; `attempts` in all (>= 1).
    explicit AlertSender(QUrl url, int timeoutMs = 5000, int attempts = 3, QObject *parent = nullptr);
    ~AlertSender() override;

    /// Queues one alert and starts sending it. `done` (optional) is called once, on this
    /// thread, with true when a 2xx answered and false when every attempt failed.
    void post(const QJsonObject &alert, std::function<void(bool delivered)> done = {});
    /// Runs the event loop until every alert is delivered or given up, or `maxMs` passed.
    void flush(qint64 maxMs);
    /// Alerts delivered (2xx) and given up so far.
    int delivered() const { return m_delivered; }
    int failed() const { return m_failed; }
    /// Alerts still being sent.
    int inFlight() const { return m_inFlight; }

private:
    void attempt(const QByteArray &body, int attemptNo, const std::function<void(bool)> &done);

    QUrl m_url;
    int m_timeoutMs;
    int m_attempts;
    QNetworkAccessManager *m_nam;
    int m_delivered = 0;
    int m_failed = 0;
    int m_inFlight = 0;
};

} // namespace flashstock
