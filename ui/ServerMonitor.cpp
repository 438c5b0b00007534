#include "ServerMonitor.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QSysInfo>
#include <QUrl>

#include <memory>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr int kAnswerWithinMs = 2000;

/// Routes whose requests are probes, not traffic: the console's own and the load balancer's.
bool isProbe(const QString &route)
{
    return route == u"metrics"_s || route == u"readyz"_s || route == u"healthz"_s;
}

/// The address to ask: the heartbeat's, with a wildcard host (listening everywhere) replaced
/// by the host the heartbeat names.
QString addressToAsk(const ExpirerBeat &beat)
{
    const QString &a = beat.address;
    const qsizetype colon = a.lastIndexOf(u':');
    if (a.isEmpty() || colon < 0)
        return a;
    const QString host = a.left(colon);
    if (host == u"0.0.0.0"_s || host == u"[::]"_s)
        return beat.host() + a.mid(colon);
    return a;
}

/// Whether this machine can ask `address` (of a heartbeat from `host`): any address of this
/// host; another host's, unless it is a loopback address (which would reach this machine).
bool reachable(const QString &address, const QString &host)
{
    if (address.isEmpty())
        return false;
    if (host == QSysInfo::machineHostName())
        return true;
    QString listen = address.left(address.lastIndexOf(u':'));
    if (listen.startsWith(u'[') && listen.endsWith(u']'))
        listen = listen.mid(1, listen.size() - 2);
    return !(listen == u"localhost"_s || QHostAddress(listen).isLoopback());
}

} // namespace

ServerMonitor::ServerMonitor(QObject *parent)
    : QObject(parent)
    , m_network(new QNetworkAccessManager(this))
{
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    m_clock = [timer] { return timer->elapsed(); };
}

ServerMonitor::~ServerMonitor()
{
    // Replies still in flight are children of the manager; none may call back into a half-destroyed monitor.
    for (const Probe &p : std::as_const(m_probes))
        for (QNetworkReply *reply : {p.readyz, p.metrics})
            if (reply)
                reply->disconnect(this);
}

void ServerMonitor::setReadToken(const QByteArray &token)
{
    m_token = token.trimmed();
    for (Probe &p : m_probes)
        p.lastTotals.reset();
}

void ServerMonitor::setClock(std::function<qint64()> clock)
{
    m_clock = std::move(clock);
}

std::optional<RequestTotals> ServerMonitor::requestTotals(const QByteArray &metrics)
{
    static const QRegularExpression label(uR"re((\w+)="((?:[^"\\]|\\.)*)")re"_s);
    static const QByteArray name = "flashstock_http_requests_total{";
    std::optional<RequestTotals> totals;
    for (const QByteArray &line : metrics.split('\n')) {
        if (!line.startsWith(name))
            continue;
        const qsizetype close = line.lastIndexOf('}');
        if (close < 0)
            continue;
        bool ok = false;
        const double value = line.mid(close + 1).trimmed().split(' ').value(0).toDouble(&ok);
        if (!ok)
            continue;
        QString route, status;
        auto it = label.globalMatch(QString::fromUtf8(line.mid(name.size(), close - name.size())));
        while (it.hasNext()) {
            const auto m = it.next();
            if (m.captured(1) == u"route"_s)
                route = m.captured(2);
            else if (m.captured(1) == u"status"_s)
                status = m.captured(2);
        }
        if (!totals)
            totals = RequestTotals{};
        if (!isProbe(route))
            totals->requests += value;
        if (status.toInt() >= 500)
            totals->errors += value;
    }
    return totals;
}

void ServerMonitor::clear()
{
    const QHash<QString, Probe> probes = std::exchange(m_probes, {});
    for (const Probe &p : probes)
        for (QNetworkReply *reply : {p.readyz, p.metrics})
            if (reply)
                reply->abort(); // its finished() finds no probe and only deletes it
    m_status = {};
    m_servers.clear();
    emit changed();
}

void ServerMonitor::update(const ExpiryStatus &status)
{
    m_status = status;
    rebuild();
    QSet<QString> listed;
    for (const ServerStatus &s : std::as_const(m_servers)) {
        listed.insert(s.id());
        if (s.state != ServerStatus::State::Replaced && s.asked)
            ask(s.id(), s.address);
    }
    for (auto it = m_probes.begin(); it != m_probes.end();) {
        if (listed.contains(it.key())) {
            ++it;
            continue;
        }
        const Probe gone = *it;
        it = m_probes.erase(it);
        for (QNetworkReply *reply : {gone.readyz, gone.metrics})
            if (reply)
                reply->abort();
    }
}

void ServerMonitor::ask(const QString &id, const QString &address)
{
    Probe &p = m_probes[id];
    const auto request = [&](const QString &path) {
        QNetworkRequest r(QUrl(u"http://%1%2"_s.arg(address, path)));
        r.setTransferTimeout(kAnswerWithinMs);
        return r;
    };
    if (!p.readyz) {
        p.readyz = m_network->get(request(u"/readyz"_s));
        QNetworkReply *reply = p.readyz;
        connect(reply, &QNetworkReply::finished, this, [this, id, reply] { readyAnswered(id, reply); });
    }
    if (!p.metrics) {
        QNetworkRequest r = request(u"/metrics"_s);
        if (!m_token.isEmpty())
            r.setRawHeader("Authorization", "Bearer " + m_token);
        p.metrics = m_network->get(r);
        QNetworkReply *reply = p.metrics;
        connect(reply, &QNetworkReply::finished, this, [this, id, reply] { metricsAnswered(id, reply); });
    }
}

void ServerMonitor::readyAnswered(const QString &id, QNetworkReply *reply)
{
    reply->deleteLater();
    auto it = m_probes.find(id);
    if (it == m_probes.end() || it->readyz != reply)
        return;
    Probe &p = *it;
    p.readyz = nullptr;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    p.answered = status > 0;
    if (status == 0) {
        p.ready.reset();
        p.readyDetail = tr("no answer: %1").arg(reply->errorString());
    } else {
        const QJsonObject body = QJsonDocument::fromJson(reply->readAll()).object();
        p.ready = status == 200 && body.value(u"ready"_s).toBool();
        QStringList down;
        for (const QJsonValue &v : body.value(u"down"_s).toArray())
            down << v.toString();
        p.readyDetail = *p.ready ? QString()
                        : down.isEmpty() ? tr("/readyz answered %1").arg(status)
                                         : down.join(u"; "_s);
    }
    rebuild();
}

void ServerMonitor::metricsAnswered(const QString &id, QNetworkReply *reply)
{
    reply->deleteLater();
    auto it = m_probes.find(id);
    if (it == m_probes.end() || it->metrics != reply)
        return;
    Probe &p = *it;
    p.metrics = nullptr;
    p.requestsPerS = p.errorsPerS = -1;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200) {
        p.lastTotals.reset();
        if (status == 401)
            p.ratesDetail = m_token.isEmpty()
                ? tr("no read token: start the console with FLASHSTOCK_TOKEN or --token-file (a token with the read "
                     "scope) to see the rates")
                : tr("the server refused the console's token (401)");
        else if (status == 403)
            p.ratesDetail = tr("the console's token lacks the read scope (403)");
        else if (status == 0)
            p.ratesDetail = tr("no answer: %1").arg(reply->errorString());
        else
            p.ratesDetail = tr("/metrics answered %1").arg(status);
        rebuild();
        return;
    }
    const std::optional<RequestTotals> totals = requestTotals(reply->readAll());
    if (!totals) {
        p.lastTotals.reset();
        p.ratesDetail = tr("its /metrics has no request counter");
        rebuild();
        return;
    }
    const qint64 now = m_clock();
    if (p.lastTotals && now > p.lastTotals->first && totals->requests >= p.lastTotals->second.requests
        && totals->errors >= p.lastTotals->second.errors) {
        const double seconds = double(now - p.lastTotals->first) / 1000.0;
        p.requestsPerS = (totals->requests - p.lastTotals->second.requests) / seconds;
        p.errorsPerS = (totals->errors - p.lastTotals->second.errors) / seconds;
        p.ratesDetail.clear();
    } else {
        // The first reading, or counters that went back (a restart): a rate needs two readings.
        p.ratesDetail = tr("measuring…");
    }
    p.lastTotals = std::pair{now, *totals};
    rebuild();
}

void ServerMonitor::rebuild()
{
    using State = ServerStatus::State;
    m_servers.clear();
    for (const ExpirerBeat &b : std::as_const(m_status.expirers)) {
        if (b.kind != u"server"_s)
            continue;
        ServerStatus s;
        s.beat = b;
        s.nowMs = m_status.nowMs;
        s.address = addressToAsk(b);
        s.asked = reachable(s.address, b.host());
        const Probe p = m_probes.value(b.expirer);
        // Whoever answers on the address of a server that was started again there is the new one.
        bool replaced = false;
        for (const ExpirerBeat &other : std::as_const(m_status.expirers))
            replaced = replaced
                       || (other.kind == b.kind && other.expirer != b.expirer && !s.address.isEmpty()
                           && other.host() == b.host() && addressToAsk(other) == s.address && other.atMs > b.atMs
                           && !other.missedBeat(m_status.nowMs));
        s.state = !b.missedBeat(m_status.nowMs) ? State::Up
                  : replaced                     ? State::Replaced
                  : p.answered                   ? State::Late
                                                 : State::Stopped;
        s.ready = p.ready;
        s.readyDetail = s.address.isEmpty()
                            ? tr("not asked: its heartbeat names no address yet (a server older than this console "
                                 "names none)")
                        : !s.asked ? tr("not asked: it listens on a loopback address of %1").arg(b.host())
                        : p.ready || !p.readyDetail.isEmpty() ? p.readyDetail
                                                              : tr("asking…");
        s.requestsPerS = p.requestsPerS;
        s.errorsPerS = p.errorsPerS;
        s.ratesDetail = s.asked ? p.ratesDetail : tr("not asked");
        m_servers << s;
    }
    for (ServerStatus &s : m_servers) {
        if (s.state == State::Stopped || s.state == State::Replaced) {
            s.ready.reset();
            s.requestsPerS = s.errorsPerS = -1;
            s.ratesDetail = tr("stopped");
        }
    }
    emit changed();
}

} // namespace flashstock
