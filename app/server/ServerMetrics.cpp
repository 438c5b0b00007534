#include "ServerMetrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <limits>

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
                        .Help("Confirms, releases and reads waiting for an engine worker")
                        .Register(r)
                        .Add({}))
        , writersQueued(prometheus::BuildGauge()
                            .Name("flashstock_book_writers_queued_orders")
                            .Help("Orders waiting for a book writer (not yet in a group-commit batch)")
                            .Register(r)
                            .Add({}))
        , bookBatch(prometheus::BuildHistogram()
                        .Name("flashstock_book_batch_orders")
                        .Help("Orders in one book writers' transaction (group commit), by operation")
                        .Register(r))
        , bookUp(prometheus::BuildGauge()
                     .Name("flashstock_book_up")
                     .Help("1 if the book answered the last readiness probe (every second), else 0")
                     .Register(r)
                     .Add({}))
        , gateUp(prometheus::BuildGauge()
                     .Name("flashstock_gate_up")
                     .Help("1 if the gate answered the last readiness probe with its scripts loaded, else 0 (absent "
                           "without a gate)")
                     .Register(r))
        , holdsPastExpiry(prometheus::BuildGauge()
                              .Name("flashstock_holds_past_expiry")
                              .Help("PENDING orders whose hold has expired and is not released yet (book)")
                              .Register(r)
                              .Add({}))
        , holdsPastExpiryUnits(prometheus::BuildGauge()
                                   .Name("flashstock_holds_past_expiry_units")
                                   .Help("Units locked by holds past their expiry (book)")
                                   .Register(r)
                                   .Add({}))
        , heartbeatAge(prometheus::BuildGauge()
                           .Name("flashstock_expirer_heartbeat_age_seconds")
                           .Help("Age of the newest expirer heartbeat in the book (+Inf: none in the last day)")
                           .Register(r)
                           .Add({}))
        , expirersAlive(prometheus::BuildGauge()
                            .Name("flashstock_expirers_alive")
                            .Help("Expirers whose last heartbeat is at most two of their intervals and 5 s old")
                            .Register(r)
                            .Add({}))
        , reconcileFinished(prometheus::BuildGauge()
                                .Name("flashstock_reconcile_last_pass_timestamp_seconds")
                                .Help("When the last reconcile pass recorded in the book ended, Unix time (0: never)")
                                .Register(r)
                                .Add({}))
        , reconcileDuration(prometheus::BuildGauge()
                                .Name("flashstock_reconcile_last_pass_duration_seconds")
                                .Help("How long the last reconcile pass recorded in the book ran")
                                .Register(r)
                                .Add({}))
        , reconcileFound(prometheus::BuildGauge()
                             .Name("flashstock_reconcile_last_pass_discrepancies")
                             .Help("Discrepancies the last reconcile pass found, by status (auto_fixed, "
                                   "pending_approval)")
                             .Register(r))
        , reconcileWarnings(prometheus::BuildGauge()
                                .Name("flashstock_reconcile_last_pass_warnings")
                                .Help("Trouble the last reconcile pass met without stopping (e.g. the gate unreachable)")
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
        , reconcilePasses(prometheus::BuildCounter()
                              .Name("flashstock_reconcile_passes_total")
                              .Help("Reconcile passes of the server's loop (--reconcile-every) that ran to their end")
                              .Register(r)
                              .Add({}))
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
        , primary(prometheus::BuildGauge()
                      .Name("flashstock_book_primary")
                      .Help("1 for the book server the server writes to (node: host:port as the book URL names it, "
                            "position: its place in the URL's host list from 1)")
                      .Register(r))
        , replication(prometheus::BuildGauge()
                          .Name("flashstock_book_replication_state")
                          .Help("1 for how the primary's commits stand now (synchronous, writing_alone, "
                                "commits_waiting, unknown, single), 0 for the others")
                          .Register(r))
        , synchronous(prometheus::BuildGauge()
                          .Name("flashstock_book_synchronous")
                          .Help("1 while a commit acknowledged now has a copy on a standby")
                          .Register(r))
        , standbys(prometheus::BuildGauge()
                       .Name("flashstock_book_standbys")
                       .Help("Standbys of the primary: connected, and streaming as synchronous or quorum standbys "
                             "(-1: the book's role may not read their state)")
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
    prometheus::Gauge &writersQueued;
    prometheus::Family<prometheus::Histogram> &bookBatch;
    prometheus::Gauge &bookUp;
    prometheus::Family<prometheus::Gauge> &gateUp;
    prometheus::Gauge &holdsPastExpiry;
    prometheus::Gauge &holdsPastExpiryUnits;
    prometheus::Gauge &heartbeatAge;
    prometheus::Gauge &expirersAlive;
    prometheus::Gauge &reconcileFinished;
    prometheus::Gauge &reconcileDuration;
    prometheus::Family<prometheus::Gauge> &reconcileFound;
    prometheus::Gauge &reconcileWarnings;
    prometheus::Counter &expired;
    prometheus::Family<prometheus::Counter> &refused;
    prometheus::Counter &reconcilePasses;
    prometheus::Gauge &pending;
    prometheus::Family<prometheus::Gauge> &available;
    prometheus::Family<prometheus::Gauge> &locked;
    prometheus::Family<prometheus::Gauge> &sold;
    prometheus::Family<prometheus::Gauge> &primary;
    prometheus::Family<prometheus::Gauge> &replication;
    prometheus::Family<prometheus::Gauge> &synchronous;
    prometheus::Family<prometheus::Gauge> &standbys;
};

ServerMetrics::ServerMetrics()
    : m_registry(std::make_shared<prometheus::Registry>())
    , m_f(std::make_unique<Families>(*m_registry))
{
    // Shown at 0 from the start, so a rate over them works before the first refusal.
    for (const QString &reason : {QStringLiteral("connection_limit"), QStringLiteral("per_ip_limit"),
                                  QStringLiteral("request_timeout")})
        m_refusedSeries.insert(reason, &m_f->refused.Add({{"reason", s(reason)}}));
    for (const QString &operation : {QStringLiteral("reserve"), QStringLiteral("confirm"), QStringLiteral("release")})
        m_batchSeries.insert(operation, &m_f->bookBatch.Add({{"operation", s(operation)}}, kBatch));
    setLastReconcilePass(std::nullopt);
    m_f->heartbeatAge.Set(std::numeric_limits<double>::infinity());
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

void ServerMetrics::setReadiness(bool bookUp, std::optional<bool> gateUp)
{
    m_f->bookUp.Set(bookUp ? 1 : 0);
    if (!gateUp)
        return;
    prometheus::Gauge *gate = nullptr;
    {
        std::lock_guard lock(m_requestMutex);
        if (!m_gateUp)
            m_gateUp = &m_f->gateUp.Add({});
        gate = m_gateUp;
    }
    gate->Set(*gateUp ? 1 : 0);
}

void ServerMetrics::setExpiry(const ExpiryStatus &status)
{
    m_f->holdsPastExpiry.Set(double(status.overdueOrders));
    m_f->holdsPastExpiryUnits.Set(double(status.overdueUnits()));
    m_f->heartbeatAge.Set(status.expirers.isEmpty()
                              ? std::numeric_limits<double>::infinity()
                              : double(std::max<qint64>(0, status.nowMs - status.expirers.constFirst().atMs)) / 1000);
    m_f->expirersAlive.Set(double(status.alive().size()));
}

void ServerMetrics::setLastReconcilePass(const std::optional<ReconcilePassRecord> &pass)
{
    const ReconcilePassRecord p = pass.value_or(ReconcilePassRecord{});
    m_f->reconcileFinished.Set(double(p.finishedAtMs) / 1000);
    m_f->reconcileDuration.Set(double(p.durationMs) / 1000);
    m_f->reconcileFound.Add({{"status", "auto_fixed"}}).Set(double(p.autoFixed));
    m_f->reconcileFound.Add({{"status", "pending_approval"}}).Set(double(p.pendingApproval));
    m_f->reconcileWarnings.Set(double(p.warnings));
}

void ServerMetrics::bookBatch(const QString &operation, int orders)
{
    // Made in the constructor for every operation, so read without a lock.
    if (prometheus::Histogram *series = m_batchSeries.value(operation))
        series->Observe(double(orders));
}

void ServerMetrics::reconcilePassed() { m_f->reconcilePasses.Increment(); }

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

void ServerMetrics::setBookReplication(const BookReplication &r)
{
    std::lock_guard lock(m_levelsMutex);
    const prometheus::Labels primary{{"node", s(r.primary)}, {"position", std::to_string(r.primaryNode)}};
    if (m_primary && *m_primary != primary)
        m_f->primary.Remove(&m_f->primary.Add(*m_primary));
    m_f->primary.Add(primary).Set(1);
    m_primary = primary;
    const BookReplication::State now = r.state();
    for (BookReplication::State state : BookReplication::states())
        m_f->replication.Add({{"state", s(BookReplication::stateName(state))}}).Set(state == now ? 1 : 0);
    m_f->synchronous.Add({}).Set(r.synchronous() ? 1 : 0);
    m_f->standbys.Add({{"kind", "connected"}}).Set(double(r.standbys));
    m_f->standbys.Add({{"kind", "synchronous"}}).Set(double(r.synchronousStandbys));
}

QByteArray ServerMetrics::text() const
{
    if (m_inFlight)
        m_f->inFlight.Set(double(m_inFlight()));
    if (m_writersQueued)
        m_f->writersQueued.Set(double(m_writersQueued()));
    const std::string out = prometheus::TextSerializer().Serialize(m_registry->Collect());
    return QByteArray(out.data(), qsizetype(out.size()));
}

} // namespace flashstock::server
