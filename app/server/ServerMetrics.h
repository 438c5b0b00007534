#pragma once

#include "Domain.h"

#include <QByteArray>
#include <QHash>
#include <QString>

#include <functional>
#include <memory>
#include <mutex>

namespace prometheus {
class Registry;
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
} // namespace prometheus

namespace flashstock::server {

/// The server's Prometheus metrics (prometheus-cpp's core registry and text serializer;
/// `flashstock_` prefix, base units, `_total` counters). Every method is thread-safe and
/// costs no I/O, so request threads may call them.
class ServerMetrics {
public:
    ServerMetrics();
    ~ServerMetrics();

    /// One answered request: `route` (reserve, confirm, ...), HTTP status, result word (or
    /// the error code) and how long it took from its headers to its answer.
    void requestDone(const QString &route, int status, const QString &result, double seconds);
    /// Where the requests between their headers and their answer (parked ones included) are
    /// counted; read when the metrics are rendered. Set once, before serving.
    void setInFlightSource(std::function<qint64()> source) { m_inFlight = std::move(source); }
    /// One connection refused at accept (`connection_limit`, `per_ip_limit`) or closed before
    /// its request was in (`request_timeout`).
    void connectionRefused(const QString &reason);
    /// One gate pipeline: the reserves in it and its round trip.
    void gatePipeline(qsizetype reserves, double seconds);
    /// One book job (`reserve`, `confirm`, `release`, `read`) and how long its engine call took.
    void bookCall(const QString &operation, double seconds);
    /// Book jobs waiting for a writer.
    void setBookQueue(qint64 jobs);
    /// Holds released by the server's expiry.
    void expired(qint64 orders);
    /// The levels of the SKUs with an open sale; gauges of SKUs no longer listed go away.
    void setSaleLevels(const QList<SkuLevels> &levels);
    /// Discrepancies waiting for approval after the server's last reconcile pass.
    void setPendingDiscrepancies(qint64 count);

    /// Everything, in the Prometheus text format (version 0.0.4).
    QByteArray text() const;

private:
    struct Families;
    /// The series of one route, status and result word: looked up in the families once,
    /// then taken from m_requestSeries (a Family::Add builds its labels and locks each time).
    struct RequestKey {
        QString route;
        int status = 0;
        QString result;
        friend bool operator==(const RequestKey &, const RequestKey &) = default;
        friend size_t qHash(const RequestKey &k, size_t seed = 0) { return qHashMulti(seed, k.route, k.status, k.result); }
    };
    struct RequestSeries {
        prometheus::Counter *requests = nullptr;
        prometheus::Histogram *latency = nullptr;
    };
    std::shared_ptr<prometheus::Registry> m_registry;
    std::unique_ptr<Families> m_f;
    std::mutex m_requestMutex; ///< guards the series caches
    QHash<RequestKey, RequestSeries> m_requestSeries;
    QHash<QString, prometheus::Histogram *> m_bookSeries; ///< by operation, under m_requestMutex
    QHash<QString, prometheus::Counter *> m_refusedSeries; ///< by reason, under m_requestMutex
    std::mutex m_levelsMutex;
    QHash<QString, SkuLevels> m_levels; ///< SKUs whose gauges exist now
    std::function<qint64()> m_inFlight;
};

} // namespace flashstock::server
