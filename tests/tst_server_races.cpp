// flashstock-server under concurrent clients: a real server process on a random port, a
// real redis-server and both book backends, several curl processes sending at once. The
// crowd on one SKU, one order sent many times at once, and payments racing timeouts.

#include "Engine.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"
#include "support/ServerProcess.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace flashstock;
using test::CurlRequest;

namespace {

CurlRequest reserveRequest(const QString &order, const QString &user, const QString &sku, qint64 qty)
{
    const QJsonObject body{{u"order"_s, order},
                           {u"user"_s, user},
                           {u"lines"_s, QJsonArray{QJsonObject{{u"sku"_s, sku}, {u"qty"_s, qty}}}}};
    return {"POST", u"/v1/reservations"_s, QJsonDocument(body).toJson(QJsonDocument::Compact)};
}

QStringList tokensOf(const QJsonObject &answer)
{
    QStringList out;
    for (const QJsonValue &v : answer.value(u"tokens"_s).toArray())
        out << v.toString();
    return out;
}

} // namespace

class TestServerRaces : public QObject {
    Q_OBJECT

private slots:
    void crowdOnOneSku_data() { test::addBackendRows(); }
    void crowdOnOneSku();
    void sameOrderAtOnce_data() { test::addBackendRows(); }
    void sameOrderAtOnce();
    void paymentRacesTimeout_data() { test::addBackendRows(); }
    void paymentRacesTimeout();
};

void TestServerRaces::crowdOnOneSku()
{
    // 300 buyers for 100 units of a SKU on sale, from 3 client processes at once: exactly
    // 100 reserved, the rest out_of_stock, book and gate at 0, nothing oversold.
    QFETCH(QString, backend);
    FS_SERVED(backend);
    FS_VERIFY_OK(engine->addSku(u"CROWD"_s, 100));
    auto sale = engine->createSale(u"CROWD"_s, 0, 0, 300, 1);
    FS_VERIFY_OK(sale);
    FS_VERIFY_OK(engine->setSaleStatus(sale->id, SaleStatus::Open));

    QList<CurlRequest> buyers;
    for (int i = 0; i < 300; ++i)
        buyers << reserveRequest(u"c-%1"_s.arg(i), u"buyer-%1"_s.arg(i), u"CROWD"_s, 1);
    const QList<QJsonObject> answers = test::sendAtOnce(server.baseUrl(), token, buyers, 3);
    QCOMPARE(answers.size(), 300);
    QCOMPARE(test::countResults(answers, u"reserved"_s), 100);
    QCOMPARE(test::countResults(answers, u"out_of_stock"_s), 200);

    const SkuLevels book = FS_OK(engine->book().levels(u"CROWD"_s));
    QCOMPARE(book.available, 0);
    QCOMPARE(book.locked, 100);
    QCOMPARE(engine->gateLevels(u"CROWD"_s).available, 0);
    // every buyer answered reserved holds its order in the book, one token each
    for (int i = 0; i < 300; ++i) {
        if (answers[i].value(u"result"_s).toString() != u"reserved"_s)
            continue;
        const OrderView order = FS_OK(engine->book().order(u"c-%1"_s.arg(i)));
        QCOMPARE(order.status, OrderStatus::Pending);
        QCOMPARE(order.lines.size(), 1);
        QCOMPARE(order.lines[0].token, tokensOf(answers[i]).value(0));
    }
    QVERIFY(test::bookHolds(*engine));
}

void TestServerRaces::sameOrderAtOnce()
{
    // Each of 10 orders sent 5 times at once, each copy from another client process: every
    // copy answers reserved with the same one set of tokens, and the units go once.
    QFETCH(QString, backend);
    FS_SERVED(backend);
    FS_VERIFY_OK(engine->addSku(u"TWIN"_s, 50));
    constexpr int kOrders = 10, kCopies = 5;
    QList<CurlRequest> requests;
    for (int i = 0; i < kOrders; ++i)
        for (int copy = 0; copy < kCopies; ++copy)
            requests << reserveRequest(u"t-%1"_s.arg(i), u"buyer-%1"_s.arg(i), u"TWIN"_s, 2);
    const QList<QJsonObject> answers = test::sendAtOnce(server.baseUrl(), token, requests, kCopies);
    QCOMPARE(answers.size(), kOrders * kCopies);
    for (int i = 0; i < kOrders; ++i) {
        const QStringList first = tokensOf(answers[i * kCopies]);
        QCOMPARE(first.size(), 1);
        for (int copy = 0; copy < kCopies; ++copy) {
            const QJsonObject &a = answers[i * kCopies + copy];
            QCOMPARE(a.value(u"result"_s).toString(), u"reserved"_s);
            QCOMPARE(tokensOf(a), first);
        }
        const OrderView order = FS_OK(engine->book().order(u"t-%1"_s.arg(i)));
        QCOMPARE(order.lines.size(), 1);
        QCOMPARE(order.lines[0].qty, 2);
        QCOMPARE(order.lines[0].token, first[0]);
    }
    const SkuLevels book = FS_OK(engine->book().levels(u"TWIN"_s));
    QCOMPARE(book.locked, 2 * kOrders);
    QCOMPARE(book.available, 50 - 2 * kOrders);
    QCOMPARE(engine->gateLevels(u"TWIN"_s).available, 50 - 2 * kOrders);
    QVERIFY(test::bookHolds(*engine));
}

void TestServerRaces::paymentRacesTimeout()
{
    // 20 held orders; one client process confirms them all while another releases them all
    // (reason timeout) in the other order, at once. One winner each: paid and already_paid,
    // or released and refund_required. The payment provider's retries then change nothing:
    // duplicate for a paid order, refund_required again and still one refund record for a
    // closed one.
    QFETCH(QString, backend);
    FS_SERVED(backend);
    constexpr int kOrders = 20;
    FS_VERIFY_OK(engine->addSku(u"RACE"_s, kOrders));
    QList<CurlRequest> holds;
    for (int i = 0; i < kOrders; ++i)
        holds << reserveRequest(u"r-%1"_s.arg(i), u"buyer-%1"_s.arg(i), u"RACE"_s, 1);
    QCOMPARE(test::countResults(test::sendAtOnce(server.baseUrl(), token, holds, 1), u"reserved"_s), kOrders);

    // Requests 2k go to the first client (confirms, r-0 first), 2k+1 to the second
    // (releases, r-19 first): both kinds of winner are likely, each order raced.
    QList<CurlRequest> race;
    for (int k = 0; k < kOrders; ++k) {
        const int paid = k, released = kOrders - 1 - k;
        race << CurlRequest{"POST", u"/v1/orders/r-%1/confirm"_s.arg(paid),
                            u"{\"payment\":\"pay-%1\"}"_s.arg(paid).toUtf8()};
        race << CurlRequest{"POST", u"/v1/orders/r-%1/release"_s.arg(released), R"({"reason":"timeout"})"};
    }
    const QList<QJsonObject> answers = test::sendAtOnce(server.baseUrl(), token, race, 2);
    QCOMPARE(answers.size(), 2 * kOrders);
    QHash<QString, QString> confirmed, releasedAs; // order -> answer word
    for (int k = 0; k < kOrders; ++k) {
        confirmed.insert(u"r-%1"_s.arg(k), answers[2 * k].value(u"result"_s).toString());
        releasedAs.insert(u"r-%1"_s.arg(kOrders - 1 - k), answers[2 * k + 1].value(u"result"_s).toString());
    }
    int paidCount = 0;
    for (int i = 0; i < kOrders; ++i) {
        const QString order = u"r-%1"_s.arg(i);
        const QString pay = confirmed.value(order), release = releasedAs.value(order);
        const bool payWon = pay == u"paid"_s && release == u"already_paid"_s;
        const bool timeoutWon = release == u"released"_s && pay == u"refund_required"_s;
        QVERIFY2(payWon != timeoutWon, qPrintable(u"%1: confirm %2, release %3"_s.arg(order, pay, release)));
        paidCount += payWon ? 1 : 0;
        QCOMPARE(FS_OK(engine->book().refundCount(order)), payWon ? 0 : 1);
    }
    qInfo("payment won %d of %d races", paidCount, kOrders);

    // the provider retries every callback: nothing moves, still one refund per closed order
    QList<CurlRequest> retries;
    for (int i = 0; i < kOrders; ++i)
        retries << CurlRequest{"POST", u"/v1/orders/r-%1/confirm"_s.arg(i), u"{\"payment\":\"pay-%1\"}"_s.arg(i).toUtf8()};
    const QList<QJsonObject> again = test::sendAtOnce(server.baseUrl(), token, retries, 2);
    QCOMPARE(again.size(), kOrders);
    for (int i = 0; i < kOrders; ++i) {
        const QString order = u"r-%1"_s.arg(i);
        const bool payWon = confirmed.value(order) == u"paid"_s;
        QCOMPARE(again[i].value(u"result"_s).toString(), payWon ? u"duplicate"_s : u"refund_required"_s);
        QCOMPARE(FS_OK(engine->book().refundCount(order)), payWon ? 0 : 1);
    }
    const SkuLevels book = FS_OK(engine->book().levels(u"RACE"_s));
    QCOMPARE(book.sold, paidCount);
    QCOMPARE(book.locked, 0);
    QCOMPARE(book.available, kOrders - paidCount);
    QCOMPARE(engine->gateLevels(u"RACE"_s).available, kOrders - paidCount);
    QVERIFY(test::bookHolds(*engine));
}

QTEST_GUILESS_MAIN(TestServerRaces)
#include "tst_server_races.moc"
