#include "ServerMetrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace flashstock::server {

namespace {

/// Latency buckets, seconds: 100 us .. 10 s.
const prometheus::Histogram::BucketBoundaries kSeconds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                       0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5,
                                                       5,      10};
/// Pipeline sizes, reserves: 1 .. 4096.
const prometheus::Histogram::BucketBoundaries kBatch{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

std::string s(const QString &text) { return text.toStdString(); }

} // namespace

struct ServerMetrics::Families {
    explicit Families(prometheus::Registry &r)
        : requests(prometheus::BuildCounter()
                       .Name("flashstock_http_requests_total")
                       .Help("HTTP requests answered, by route, status and result word (or error code)")
                       .Register(r))
        , latency(prometheus::BuildHistogram()
                      .Name("flashstock_http_request_duration_seconds")
                      .Help("Time from a request's headers to its answer, by route")
                      .Register(r))
        , inFlight(prometheus::BuildGauge()
                       .Name("flashstock_http_requests_in_flight")
                       .Help("Requests received and not yet answered (parked ones included)")
                       .Register(r)
                       .Add({}))
        , gateRoundTrip(prometheus::BuildHistogram()
                            .Name("flashstock_gate_round_trip_seconds")
                            .Help("One gate pipeline of reserves, sent and answered")
                            .Register(r)
                            .Add({}, kSeconds))
        , batch(prometheus::BuildHistogram()
                    .Name("flashstock_gate_pipeline_reserves")
                    .Help("Reserves sent to the gate in one pipeline")
                    .Register(r)
                    .Add({}, kBatch))
        , book(prometheus::BuildHistogram()
                   .Name("flashstock_book_round_trip_seconds")
                   .Help("One book job (its engine call), by operation")
                   .Register(r))
        , bookQueue(prometheus::BuildGauge()
                        .Name("flashstock_book_queue_jobs")
                        .Help("Book jobs waiting for a writer")
                        .Register(r)
                        .Add({}))
        , expired(prometheus::BuildCounter()
                      .Name("flashstock_expired_holds_total")
                      .Help("Holds released by the server's expiry")
                      .Register(r)
                      .Add({}))
        , refused(prometheus::BuildCounter()
                      .Name("flashstock_http_connections_refused_total")
                      .Help("Connections refused at accept (reason connection_limit, per_ip_limit) or closed before "
                            "their request was in (request_timeout)")
                      .Register(r))
        , pending(prometheus::BuildGauge()
                      .Name("flashstock_discrepancies_pending")
                      .Help("Discrepancies waiting for approval after the last reconcile pass")
                      .Register(r)
                      .Add({}))
        , available(prometheus::BuildGauge()
                        .Name("flashstock_sku_available_units")
                        .Help("Book available units of a SKU with an open sale")
                        .Register(r))
        , locked(prometheus::BuildGauge()
                     .Name("flashstock_sku_locked_units")
                     .Help("Book locked units (held by reservations) of a SKU with an open sale")
                     .Register(r))
        , sold(prometheus::BuildGauge()
                   .Name("flashstock_sku_sold_units")
                   .Help("Book sold units of a SKU with an open sale")
                   .Register(r))
    {
    }

    prometheus::Family<prometheus::Counter> &requests;
    prometheus::Family<prometheus::Histogram> &latency;
    prometheus::Gauge &inFlight;
    prometheus::Histogram &gateRoundTrip;
    prometheus::Histogram &batch;
    prometheus::Family<prometheus::Histogram> &book;
    prometheus::Gauge &bookQueue;
    prometheus::Counter &expired;
    prometheus::Family<prometheus::Counter> &refused;
    prometheus::Gauge &pending;
    prometheus::Family<prometheus::Gauge> &available;
    prometheus::Family<prometheus::Gauge> &locked;
    prometheus::Family<prometheus::Gauge> &sold;
};

ServerMetrics::ServerMetrics()
    : m_registry(std::make_shared<prometheus::Registry>())
    , m_f(std::make_unique<Families>(*m_registry))
{
    // Shown at 0 from the start, so a rate over them works before the first refusal.
    for (const QString &reason : {QStringLiteral("connection_limit"), QStringLiteral("per_ip_limit"),
                                  QStringLiteral("request_timeout")})
        m_refusedSeries.insert(reason, &m_f->refused.Add({{"reason", s(reason)}}));
}

ServerMetrics::~ServerMetrics() = default;

void ServerMetrics::requestDone(const QString &route, int status, const QString &result, double seconds)
{
    RequestSeries series;
    {
        std::lock_guard lock(m_requestMutex);
        RequestSeries &known = m_requestSeries[RequestKey{route, status, result}];
        if (!known.requests) {
            known.requests = &m_f->requests.Add(
                {{"route", s(route)}, {"status", std::to_string(status)}, {"result", s(result)}});
            known.latency = &m_f->latency.Add({{"route", s(route)}}, kSeconds);
        }
        series = known;
    }
    series.requests->Increment();
    series.latency->Observe(seconds);
}

void ServerMetrics::connectionRefused(const QString &reason)
{
    prometheus::Counter *series = nullptr;
    {
        std::lock_guard lock(m_requestMutex);
        prometheus::Counter *&known = m_refusedSeries[reason];
        if (!known)
            known = &m_f->refused.Add({{"reason", s(reason)}});
        series = known;
    }
    series->Increment();
}

void ServerMetrics::gatePipeline(qsizetype reserves, double seconds)
{
    m_f->batch.Observe(double(reserves));
    m_f->gateRoundTrip.Observe(seconds);
}

void ServerMetrics::bookCall(const QString &operation, double seconds)
{
    prometheus::Histogram *series = nullptr;
    {
        std::lock_guard lock(m_requestMutex);
        prometheus::Histogram *&known = m_bookSeries[operation];
        if (!known)
            known = &m_f->book.Add({{"operation", s(operation)}}, kSeconds);
        series = known;
    }
    series->Observe(seconds);
}

void ServerMetrics::setBookQueue(qint64 jobs) { m_f->bookQueue.Set(double(jobs)); }

void ServerMetrics::expired(qint64 orders) { m_f->expired.Increment(double(orders)); }

void ServerMetrics::setPendingDiscrepancies(qint64 count) { m_f->pending.Set(double(count)); }

void ServerMetrics::setSaleLevels(const QList<SkuLevels> &levels)
{
    std::lock_guard lock(m_levelsMutex);
    QHash<QString, SkuLevels> now;
    for (const SkuLevels &l : levels)
        now.insert(l.sku, l);
    for (auto it = m_levels.cbegin(); it != m_levels.cend(); ++it) {
        if (now.contains(it.key()))
            continue;
        const prometheus::Labels labels{{"sku", s(it.key())}};
        for (auto *family : {&m_f->available, &m_f->locked, &m_f->sold})
            family->Remove(&family->Add(labels));
    }
    for (const SkuLevels &l : levels) {
        const prometheus::Labels labels{{"sku", s(l.sku)}};
        m_f->available.Add(labels).Set(double(l.available));
        m_f->locked.Add(labels).Set(double(l.locked));
        m_f->sold.Add(labels).Set(double(l.sold));
    }
    m_levels = now;
}

QByteArray ServerMetrics::text() const
{
    if (m_inFlight)
        m_f->inFlight.Set(double(m_inFlight()));
    const std::string out = prometheus::TextSerializer().Serialize(m_registry->Collect());
    return QByteArray(out.data(), qsizetype(out.size()));
}

} // namespace flashstock::server
