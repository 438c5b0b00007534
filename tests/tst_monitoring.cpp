// What an operator watches flashstock-server with (resources/monitoring, docs/monitoring.md):
// a real server's /metrics exports every metric the alert rules and the dashboard name, and
// no label value comes from a client.

#include "Engine.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"
#include "support/ServerProcess.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace flashstock;
using test::http;

namespace {

const QString kMonitoring = QStringLiteral(FLASHSTOCK_MONITORING_DIR);

/// Metrics the HA formation's work exports (flashstock_book_synchronous: 1 while the book's
/// primary has a synchronous standby); the rules name them ahead of it. Only these may be
/// missing from a server's /metrics.
const QSet<QString> kExportedByTheHaFormation{u"flashstock_book_synchronous"_s};

/// One sample of the Prometheus text format: its name and labels.
struct Sample {
    QString name;
    QHash<QString, QString> labels;
};

/// The samples of a /metrics body (comments skipped). Label values in it are escaped as
/// the text format says; none here holds a quote, so a plain split is enough.
QList<Sample> samplesOf(const QByteArray &body)
{
    static const QRegularExpression line(u"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})? \\S+$"_s);
    static const QRegularExpression label(u"([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\""_s);
    QList<Sample> out;
    for (const QString &text : QString::fromUtf8(body).split(u'\n')) {
        const auto m = line.match(text);
        if (!m.hasMatch())
            continue;
        Sample s{m.captured(1), {}};
        for (auto it = label.globalMatch(m.captured(2)); it.hasNext();) {
            const auto l = it.next();
            s.labels.insert(l.captured(1), l.captured(2));
        }
        out << s;
    }
    return out;
}

/// Every `flashstock_...` name in `text`.
QSet<QString> metricNames(const QString &text)
{
    static const QRegularExpression name(u"\\bflashstock_[a-z0-9_]+"_s);
    QSet<QString> out;
    for (auto it = name.globalMatch(text); it.hasNext();)
        out.insert(it.next().captured(0));
    return out;
}

QString readFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

/// Every `expr` of every panel of a Grafana dashboard (rows' panels too).
void collectExpressions(const QJsonValue &v, QStringList &out)
{
    if (v.isArray()) {
        for (const QJsonValue &e : v.toArray())
            collectExpressions(e, out);
    } else if (v.isObject()) {
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (it.key() == u"expr"_s)
                out << it.value().toString();
            else
                collectExpressions(it.value(), out);
        }
    }
}

QByteArray reservation(const QString &order, const QString &sku, qint64 qty, const QString &user)
{
    return QJsonDocument(QJsonObject{{u"order"_s, order}, {u"user"_s, user},
                                     {u"lines"_s, QJsonArray{QJsonObject{{u"sku"_s, sku}, {u"qty"_s, qty}}}}})
        .toJson(QJsonDocument::Compact);
}

/// Opens a sale of `sku` (20 units, a 600 s hold) and reserves `order` (`qty`, for `user`)
/// through `server`: the first reserve may meet the dispatcher's sale cache (one second) and
/// is sent again until reserved. False (with a warning) if it never is.
bool openSaleAndReserve(Engine &engine, const test::ServerProcess &server, const QString &token, const QString &sku,
                        const QString &order, qint64 qty, const QString &user)
{
    if (!engine.addSku(sku, 20))
        return false;
    auto sale = engine.createSale(sku, 0, 0, 600, 0);
    if (!sale || !engine.setSaleStatus(sale->id, SaleStatus::Open))
        return false;
    for (int attempt = 0; attempt < 100; ++attempt) {
        const auto r = http("POST", server.baseUrl() + u"/v1/reservations"_s, reservation(order, sku, qty, user), token);
        if (r.json.value(u"result"_s).toString() == u"reserved"_s)
            return true;
        QTest::qWait(100);
    }
    qWarning("%s was never reserved", qPrintable(order));
    return false;
}

} // namespace

class TestMonitoring : public QObject {
    Q_OBJECT

private slots:
    void everyWatchedMetricIsExported_data() { test::addBackendRows(); }
    void everyWatchedMetricIsExported();
    void labelsNeverComeFromClients();
};

void TestMonitoring::everyWatchedMetricIsExported()
{
    QFETCH(QString, backend);
    const QString rules = readFile(kMonitoring + u"/flashstock.rules.yml"_s);
    QVERIFY2(!rules.isEmpty(), "resources/monitoring/flashstock.rules.yml is missing or empty");
    const QJsonDocument dashboard = QJsonDocument::fromJson(readFile(kMonitoring + u"/flashstock-dashboard.json"_s).toUtf8());
    QVERIFY2(dashboard.isObject(), "resources/monitoring/flashstock-dashboard.json is not a JSON object");
    QStringList expressions;
    collectExpressions(dashboard.object(), expressions);
    QVERIFY(expressions.size() >= 10);
    QSet<QString> watched = metricNames(rules);
    for (const QString &e : std::as_const(expressions))
        watched += metricNames(e);
    QVERIFY(watched.size() >= 20);

    // A server that has done a little of everything: a sale open, a reserve, a payment, a
    // release, reconcile and expiry passes (both every second).
    FS_SERVED(backend, u"--reconcile-every"_s, u"1"_s);
    QVERIFY(openSaleAndReserve(*engine, server, token, u"TEE"_s, u"m-1"_s, 2, u"ann"_s));
    const QString base = server.baseUrl();
    QCOMPARE(http("POST", base + u"/v1/orders/m-1/confirm"_s, R"({"payment":"p-1"})", token).status, 200);
    QCOMPARE(http("POST", base + u"/v1/reservations"_s, reservation(u"m-2"_s, u"TEE"_s, 1, u"bob"_s), token).status, 200);
    QCOMPARE(http("POST", base + u"/v1/orders/m-2/release"_s, R"({"reason":"cancel"})", token).status, 200);

    // The book's figures are read every 5 s by the server's housekeeping.
    QSet<QString> missing;
    QByteArray body;
    QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                 body = http("GET", base + u"/metrics"_s, {}, token, {}).body;
                                 QSet<QString> exported;
                                 for (const Sample &s : samplesOf(body))
                                     exported.insert(s.name);
                                 missing = watched - exported - kExportedByTheHaFormation;
                                 return missing.isEmpty();
                             }()),
                             60000);
    if (!missing.isEmpty())
        qWarning("missing: %s", qPrintable(QStringList(missing.cbegin(), missing.cend()).join(u", "_s)));
    // The figures are the book's.
    QVERIFY(body.contains("flashstock_book_up 1"));
    QVERIFY(body.contains("flashstock_gate_up 1"));
    QVERIFY(body.contains("flashstock_sku_sold_units{sku=\"TEE\"} 2"));
    QVERIFY(body.contains("flashstock_expirers_alive 1"));
    QVERIFY(!body.contains("flashstock_reconcile_last_pass_timestamp_seconds 0\n"));
}

void TestMonitoring::labelsNeverComeFromClients()
{
    FS_SERVED(u"sqlite"_s);
    FS_VERIFY_OK(engine->addSku(u"OFFSALE"_s, 5));
    // Orders in each status, read back; unknown routes, SKUs and orders.
    QVERIFY(openSaleAndReserve(*engine, server, token, u"TEE"_s, u"ord-pending"_s, 1, u"a"_s));
    const QString base = server.baseUrl();
    QCOMPARE(http("POST", base + u"/v1/reservations"_s, reservation(u"ord-paid"_s, u"TEE"_s, 1, u"b"_s), token).status, 200);
    QCOMPARE(http("POST", base + u"/v1/orders/ord-paid/confirm"_s, R"({"payment":"p-1"})", token).status, 200);
    QCOMPARE(http("POST", base + u"/v1/reservations"_s, reservation(u"ord-closed"_s, u"TEE"_s, 1, u"c"_s), token).status, 200);
    QCOMPARE(http("POST", base + u"/v1/orders/ord-closed/release"_s, R"({"reason":"cancel"})", token).status, 200);
    const QStringList clientWords{u"ord-pending"_s, u"ord-paid"_s, u"ord-closed"_s, u"no-such-order"_s,
                                  u"NO-SUCH-SKU"_s, u"OFFSALE"_s, u"evil-route"_s, u"a"_s, u"b"_s, u"c"_s};
    for (const QString &order : {u"ord-pending"_s, u"ord-paid"_s, u"ord-closed"_s})
        QCOMPARE(http("GET", base + u"/v1/orders/"_s + order, {}, token).status, 200);
    QCOMPARE(http("GET", base + u"/v1/orders/no-such-order"_s, {}, token).status, 404);
    QCOMPARE(http("GET", base + u"/v1/skus/OFFSALE"_s, {}, token).status, 200);
    QVERIFY(http("GET", base + u"/v1/skus/NO-SUCH-SKU"_s, {}, token).status >= 400);
    QCOMPARE(http("GET", base + u"/v1/evil-route"_s, {}, token).status, 404);
    QCOMPARE(http("DELETE", base + u"/v1/orders/ord-paid"_s, {}, token).status, 405);

    QByteArray body;
    QTRY_VERIFY_WITH_TIMEOUT((body = http("GET", base + u"/metrics"_s, {}, token, {}).body)
                                 .contains("flashstock_sku_available_units{sku=\"TEE\"}"),
                             30000);
    const QSet<QString> results{u"reserved"_s, u"sale_closed"_s, u"paid"_s, u"released"_s, u"found"_s,
                                u"not_found"_s, u"invalid_argument"_s, u"metrics"_s};
    const QSet<QString> routes{u"reserve"_s, u"confirm"_s, u"release"_s, u"order"_s, u"sku"_s, u"unknown"_s,
                               u"metrics"_s};
    int requestSeries = 0;
    for (const Sample &s : samplesOf(body)) {
        for (auto it = s.labels.cbegin(); it != s.labels.cend(); ++it)
            QVERIFY2(!clientWords.contains(it.value()),
                     qPrintable(u"%1{%2=\"%3\"}: a label value a client chose"_s.arg(s.name, it.key(), it.value())));
        if (s.name != u"flashstock_http_requests_total"_s)
            continue;
        ++requestSeries;
        QVERIFY2(routes.contains(s.labels.value(u"route"_s)), qPrintable(s.labels.value(u"route"_s)));
        QVERIFY2(results.contains(s.labels.value(u"result"_s)),
                 qPrintable(u"route %1: result %2"_s.arg(s.labels.value(u"route"_s), s.labels.value(u"result"_s))));
    }
    QVERIFY(requestSeries >= 6);
    // The reads of an order are counted as found, whatever its status.
    QVERIFY(body.contains("flashstock_http_requests_total{result=\"found\",route=\"order\",status=\"200\"} 3"));
}

QTEST_GUILESS_MAIN(TestMonitoring)
#include "tst_monitoring.moc"
