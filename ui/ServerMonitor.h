#pragma once

#include "Expiry.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

class QNetworkAccessManager;
class QNetworkReply;

namespace flashstock {

/// One flashstock-server working on the book, as the console sees it: its last heartbeat
/// (the book's), and what its HTTP endpoint answered (/readyz, /metrics).
struct ServerStatus {
    /// Up: its heartbeat is on time. Late: the heartbeat is overdue but the server still
    /// answers (its expiry is stuck). Stopped: overdue and no answer (or nothing to ask).
    /// Replaced: overdue, and a newer server with a heartbeat on time listens on its address
    /// (it was started again there).
    enum class State { Up, Late, Stopped, Replaced };

    ExpirerBeat beat;         ///< its last heartbeat (database clock)
    qint64 nowMs = 0;         ///< the database clock when the heartbeat was read
    State state = State::Up;
    /// Where it listens (`HOST:PORT`; a wildcard listen address is replaced by the
    /// heartbeat's host); empty: the heartbeat names none (yet: its first pass runs before it
    /// listens; or a server older than this console).
    QString address;
    /// The console asks it for /readyz and /metrics: it has an address this machine can
    /// reach (a loopback address of another host is not asked).
    bool asked = false;
    std::optional<bool> ready; ///< /readyz: ready or not; nullopt: no answer (yet)
    QString readyDetail;       ///< why not ready, or why there is no answer
    double requestsPerS = -1;  ///< API requests per second (probes of /metrics, /readyz, /healthz left out); -1: unknown
    double errorsPerS = -1;    ///< answers with status 5xx per second; -1: unknown
    QString ratesDetail;       ///< why the rates are unknown (no read token, not measured yet, ...)

    /// The server's id, `server@HOST:PID`.
    const QString &id() const { return beat.expirer; }
};

/// Request and error counts a server's /metrics reports (flashstock_http_requests_total).
struct RequestTotals {
    double requests = 0; ///< every answer except those to /metrics, /readyz and /healthz
    double errors = 0;   ///< answers with a 5xx status (every route)
};

/// Keeps the list of servers working on the book and asks each for /readyz and /metrics.
/// Fed by update() with every sample's heartbeats (the servers are the expirers of kind
/// `server`); its HTTP requests are asynchronous (QNetworkAccessManager on this thread:
/// nothing waits), at most one of each kind in flight per server, each given up after 2 s.
/// /metrics needs a bearer token with the `read` scope (setReadToken); without one, or with
/// one the server refuses, the rates stay unknown and ratesDetail says why. Rates are the
/// counters' change between two answers over the clock's time between them. GUI thread.
class ServerMonitor : public QObject {
    Q_OBJECT
public:
    explicit ServerMonitor(QObject *parent = nullptr);
    ~ServerMonitor() override;

    /// The bearer token sent with /metrics (empty: none).
    void setReadToken(const QByteArray &token);
    bool hasReadToken() const { return !m_token.isEmpty(); }
    /// The clock the rates are measured with, ms (default: a monotonic one). For tests.
    void setClock(std::function<qint64()> clock);

    /// Takes the heartbeats of one sample: the servers' states, then asks each server that
    /// may still run for /readyz and /metrics. Emits changed().
    void update(const ExpiryStatus &status);
    /// Forgets every server (a new connection). Emits changed().
    void clear();
    /// The servers, newest heartbeat first.
    const QList<ServerStatus> &servers() const { return m_servers; }

    /// The totals in a Prometheus text exposition (flashstock_http_requests_total); nullopt
    /// if it has none.
    static std::optional<RequestTotals> requestTotals(const QByteArray &metrics);

signals:
    void changed();

private:
    /// What the console learnt from one server's endpoint, kept between samples.
    struct Probe {
        std::optional<bool> ready;
        QString readyDetail;
        bool answered = false;     ///< the last /readyz got an HTTP answer
        QNetworkReply *readyz = nullptr;
        QNetworkReply *metrics = nullptr;
        std::optional<std::pair<qint64, RequestTotals>> lastTotals; ///< clock ms, totals
        double requestsPerS = -1;
        double errorsPerS = -1;
        QString ratesDetail;
    };
    void ask(const QString &id, const QString &address);
    void readyAnswered(const QString &id, QNetworkReply *reply);
    void metricsAnswered(const QString &id, QNetworkReply *reply);
    /// The states and probe results laid over the last heartbeats, then changed().
    void rebuild();

    QNetworkAccessManager *m_network = nullptr;
    QByteArray m_token;
    std::function<qint64()> m_clock;
    ExpiryStatus m_status;
    QList<ServerStatus> m_servers;
    QHash<QString, Probe> m_probes; ///< by server id
};

} // namespace flashstock
