// flashstock-server under concurrent clients: a real server process on a random port, a
// real redis-server and both book backends, several curl processes sending at once. The
// crowd on one SKU, one order sent many times at once, payments racing timeouts, a drain
// on SIGTERM with requests in flight (and one stuck in the book past the drain's limit), a
// kill -9 under load, and a request thread's connections all sending at once.

#include "Engine.h"
#include "gate/Gate.h"
#include "reconcile/Reconciler.h"
#include "store/Database.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"
#include "support/ServerProcess.h"
#include "support/TcpCut.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTcpSocket>
#include <QTest>
#include <QThread>

#include <csignal>
#include <memory>
#include <utility>
#include <vector>

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

/// Sends `request` on `socket` and returns the answer's head and what came with it (up to
/// `ms`): enough for its status line.
QByteArray exchange(QTcpSocket &socket, const QByteArray &request, int ms = 5000)
{
    socket.write(request);
    socket.flush();
    QByteArray got;
    QElapsedTimer t;
    t.start();
    while (!got.contains("\r\n\r\n") && t.elapsed() < ms && socket.state() == QAbstractSocket::ConnectedState) {
        socket.waitForReadyRead(50);
        got += socket.readAll();
    }
    return got;
}

/// Reads one answer from `socket` (its head and its Content-Length of body) until
/// `deadline`; empty if it did not come whole.
QByteArray readAnswer(QTcpSocket &socket, const QDeadlineTimer &deadline)
{
    QByteArray got;
    for (;;) {
        if (const qsizetype head = got.indexOf("\r\n\r\n"); head >= 0) {
            qint64 length = 0;
            for (const QByteArray &line : got.left(head).split('\n'))
                if (line.toLower().startsWith("content-length:"))
                    length = line.mid(15).trimmed().toLongLong();
            if (got.size() >= head + 4 + length)
                return got;
        }
        if (deadline.hasExpired() || socket.state() != QAbstractSocket::ConnectedState)
            return {};
        socket.waitForReadyRead(20);
        got += socket.readAll();
    }
}

/// True when every thread of process `pid` is in `state` in /proc: S, sleeping (a request
/// thread waits in epoll_wait, not half way through its work), T, stopped (by SIGSTOP).
bool allThreadsIn(qint64 pid, char state)
{
    const QString tasks = u"/proc/%1/task"_s.arg(pid);
    const QStringList ids = QDir(tasks).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &id : ids) {
        QFile stat(tasks + u'/' + id + u"/stat"_s);
        if (!stat.open(QIODevice::ReadOnly))
            return false;
        const QByteArray line = stat.readAll();
        if (line.mid(line.lastIndexOf(')') + 2, 1) != QByteArray(1, state))
            return false;
    }
    return !ids.isEmpty();
}

/// The orders `answers` (of reserve requests for `orders`, in order) answered `reserved`.
QSet<QString> answeredReserved(const QStringList &orders, const QList<QJsonObject> &answers)
{
    QSet<QString> out;
    for (qsizetype i = 0; i < orders.size() && i < answers.size(); ++i)
        if (answers[i].value(u"result"_s).toString() == u"reserved"_s)
            out.insert(orders[i]);
    return out;
}

/// A connection from local address `from` to the server on `port`, connected; nullptr if not.
std::unique_ptr<QTcpSocket> connectFrom(const QString &from, int port)
{
    auto socket = std::make_unique<QTcpSocket>();
    if (!socket->bind(QHostAddress(from)))
        return nullptr;
    socket->connectToHost(u"127.0.0.1"_s, quint16(port));
    return socket->waitForConnected(2000) ? std::move(socket) : nullptr;
}

/// Writes `bytes` on `socket` one byte every `everyMs` until the server closes the
/// connection or `ms` pass; returns what the server sent. Never idle for longer than
/// `everyMs`, the sender keeps every idle timeout away.
QByteArray trickle(QTcpSocket &socket, const QByteArray &bytes, int everyMs, int ms)
{
    QByteArray got;
    QElapsedTimer t;
    t.start();
    for (qsizetype i = 0; socket.state() == QAbstractSocket::ConnectedState && t.elapsed() < ms; ++i) {
        if (i < bytes.size()) {
            socket.write(bytes.mid(i, 1));
            socket.flush();
        }
        socket.waitForReadyRead(everyMs);
        got += socket.readAll();
    }
    return got + socket.readAll();
}

/// The value of the series `series` (its name and labels, as written) in Prometheus text;
/// -1 if it is not there.
double metricValue(const QByteArray &text, const QByteArray &series)
{
    for (const QByteArray &line : text.split('\n'))
        if (line.startsWith(series + ' '))
            return line.mid(series.size() + 1).toDouble();
    return -1;
}

/// Holds every COMMIT on book `url` of a transaction that inserted an order: the test adds
/// a deferred constraint trigger to the book that takes a shared advisory lock, and a session
/// of its own holds that lock, so such a COMMIT is sent and then waits in the book. Thread
/// affinity: the creating thread. release() lets them commit; so does the destructor.
class CommitsHeld {
public:
    explicit CommitsHeld(const DbUrl &url)
        : m_name(u"commits-held"_s)
    {
        QSqlDatabase db = addPostgresConnection(url, m_name);
        if (!db.open()) {
            m_problem = db.lastError().text();
            return;
        }
        for (const QString &sql :
             {u"CREATE FUNCTION fs_test_hold_commit() RETURNS trigger LANGUAGE plpgsql AS "
              u"$$ BEGIN PERFORM pg_advisory_xact_lock_shared(%1); RETURN NULL; END $$"_s.arg(kKey),
              u"CREATE CONSTRAINT TRIGGER fs_test_hold_commit AFTER INSERT ON orders DEFERRABLE INITIALLY DEFERRED "
              u"FOR EACH ROW EXECUTE FUNCTION fs_test_hold_commit()"_s,
              u"SELECT pg_advisory_lock(%1)"_s.arg(kKey)})
            if (m_problem = run(sql); !m_problem.isEmpty())
                return;
    }
    ~CommitsHeld()
    {
        release();
        QSqlDatabase::database(m_name, false).close();
        QSqlDatabase::removeDatabase(m_name);
    }
    CommitsHeld(const CommitsHeld &) = delete;
    CommitsHeld &operator=(const CommitsHeld &) = delete;

    QString problem() const { return m_problem; }
    /// The backend whose COMMIT waits for the lock (up to 20 s); 0 if none did.
    qint64 waitingCommit()
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 20000) {
            QSqlQuery q(QSqlDatabase::database(m_name, false));
            if (q.exec(u"SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event = "
                       u"'advisory'"_s)
                && q.next())
                return q.value(0).toLongLong();
            QThread::msleep(10);
        }
        return 0;
    }
    /// Ends backend `pid`: its COMMIT never happens. Empty when done, else why not.
    QString terminate(qint64 pid) { return run(u"SELECT pg_terminate_backend(%1)"_s.arg(pid)); }
    /// The waiting COMMITs go on.
    void release()
    {
        if (std::exchange(m_holding, false))
            m_problem += run(u"SELECT pg_advisory_unlock(%1)"_s.arg(kKey));
    }

private:
    static constexpr int kKey = 30417;

    QString run(const QString &sql)
    {
        QSqlQuery q(QSqlDatabase::database(m_name, false));
        return q.exec(sql) ? QString() : q.lastError().text();
    }

    QString m_name;
    QString m_problem;
    bool m_holding = true;
};

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
    void drainAnswersWhatIsInFlight_data() { test::addBackendRows(); }
    void drainAnswersWhatIsInFlight();
    void drainPastItsLimitAnswersUnknown();
    void unknownOutcomeIsResolvedByTheServer_data();
    void unknownOutcomeIsResolvedByTheServer();
    void killUnderLoadLosesNoAnswer_data() { test::addBackendRows(); }
    void killUnderLoadLosesNoAnswer();
    void connectionsSendingTogetherAreAnswered_data() { test::addBackendRows(); }
    void connectionsSendingTogetherAreAnswered();
    void slowClientsAreCutOff();
    void connectionLimitsAreLoggedAndCounted();
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

void TestServerRaces::drainAnswersWhatIsInFlight()
{
    // SIGTERM while batches of reservations are in flight: the server stops listening, a new
    // request on a connection it already had is answered 503, every batch it took is
    // answered whole, then it exits 0. The book holds exactly the orders answered reserved,
    // and the gate agrees with it without a reconcile pass.
    QFETCH(QString, backend);
    FS_SERVED(backend);
    FS_VERIFY_OK(engine->addSku(u"DRAIN"_s, 100000));
    QTcpSocket open;
    open.connectToHost(u"127.0.0.1"_s, quint16(server.port()));
    QVERIFY(open.waitForConnected(2000));
    const QByteArray ready = "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    QVERIFY(exchange(open, ready).startsWith("HTTP/1.1 200"));

    constexpr int kBatches = 6, kPerBatch = 500;
    QList<CurlRequest> batches;
    QList<QStringList> orders;
    for (int b = 0; b < kBatches; ++b) {
        QJsonArray items;
        orders << QStringList{};
        for (int i = 0; i < kPerBatch; ++i) {
            orders.last() << u"d-%1-%2"_s.arg(b).arg(i);
            items << QJsonObject{{u"order"_s, orders.last().last()},
                                 {u"lines"_s, QJsonArray{QJsonObject{{u"sku"_s, u"DRAIN"_s}, {u"qty"_s, 1}}}}};
        }
        batches << CurlRequest{"POST", u"/v1/reservations/batch"_s,
                               QJsonDocument(QJsonObject{{u"reservations"_s, items}}).toJson(QJsonDocument::Compact)};
    }
    const qint64 before = FS_OK(engine->book().ledgerCount());
    test::HttpCrowd crowd(server.baseUrl(), token, batches, 3);
    QVERIFY2(crowd.start(), qPrintable(crowd.errorString()));
    QTRY_VERIFY_WITH_TIMEOUT(FS_OK(engine->book().ledgerCount()) > before, 10000);
    server.terminate();
    QTRY_VERIFY_WITH_TIMEOUT(server.log().contains(u"draining"_s), 5000);
    const QByteArray late = exchange(open, ready);
    QVERIFY2(late.startsWith("HTTP/1.1 503"), qPrintable(QString::fromLatin1(late) + server.log()));
    QCOMPARE(server.waitForExit(15000), 0);
    QVERIFY(crowd.waitForFinished(30000));
    QVERIFY2(server.log().contains(u"stopped after a drain"_s), qPrintable(server.log()));

    const QList<QJsonObject> answers = crowd.answers();
    int whole = 0;
    for (int b = 0; b < kBatches; ++b) {
        const QJsonObject &a = answers[b];
        if (a.isEmpty() || a.value(u"error"_s).toObject().value(u"code"_s).toString() == u"unavailable"_s) {
            // refused: never taken (the listener was closed) or answered draining
            for (const QString &order : std::as_const(orders[b]))
                QCOMPARE(FS_OK(engine->book().orderStatus(order)), std::nullopt);
            continue;
        }
        ++whole;
        const QJsonArray results = a.value(u"results"_s).toArray();
        QCOMPARE(results.size(), kPerBatch);
        for (int i = 0; i < kPerBatch; ++i) {
            QCOMPARE(results[i].toObject().value(u"result"_s).toString(), u"reserved"_s);
            QCOMPARE(FS_OK(engine->book().orderStatus(orders[b][i])), std::optional(OrderStatus::Pending));
        }
    }
    QVERIFY(whole >= 1); // the one in flight at the signal, at least
    qInfo("%d of %d batches answered whole before the exit", whole, kBatches);
    const SkuLevels book = FS_OK(engine->book().levels(u"DRAIN"_s));
    QCOMPARE(book.locked, whole * kPerBatch);
    QCOMPARE(engine->gateLevels(u"DRAIN"_s).available, book.available);
    QVERIFY(test::bookHolds(*engine));
}

void TestServerRaces::drainPastItsLimitAnswersUnknown()
{
    // PostgreSQL: another session holds the SKU's bucket row, so a reserve the gate let
    // through waits in the book (SQLite would give up on its busy timeout first). SIGTERM:
    // at the drain's 10 s the server answers it 503 outcome_unknown, not a refusal, since the
    // book might still take it; the process exits 0. The book took nothing, a reconcile pass
    // gives the gate its units back, and the buyer's retry reserves.
    FS_SERVED(u"postgresql"_s);
    FS_VERIFY_OK(engine->addSku(u"STUCK"_s, 10));
    test::BucketRowsHeld held(fresh.url(), u"STUCK"_s);
    QVERIFY2(held.problem().isEmpty(), qPrintable(held.problem()));
    test::HttpCrowd buyer(server.baseUrl(), token, {reserveRequest(u"stuck-1"_s, u"alice"_s, u"STUCK"_s, 3)}, 1);
    QVERIFY2(buyer.start(), qPrintable(buyer.errorString()));
    QTRY_COMPARE_WITH_TIMEOUT(engine->gateLevels(u"STUCK"_s).available, 7, 10000); // past the gate
    server.terminate();
    QCOMPARE(server.waitForExit(20000), 0);
    QVERIFY(buyer.waitForFinished(5000));
    const QJsonObject error = buyer.answers().value(0).value(u"error"_s).toObject();
    QCOMPARE(error.value(u"code"_s).toString(), u"outcome_unknown"_s);
    QVERIFY2(server.log().contains(u"1 requests still in flight after 10 s"_s), qPrintable(server.log()));

    QVERIFY(held.release());
    QCOMPARE(FS_OK(engine->book().orderStatus(u"stuck-1"_s)), std::nullopt);
    Reconciler reconciler(*engine);
    FS_VERIFY_OK(reconciler.runPass(0));
    QCOMPARE(engine->gateLevels(u"STUCK"_s).available, 10);
    QCOMPARE(FS_OK(engine->book().levels(u"STUCK"_s)).available, 10);
    auto retry = engine->reserve(u"stuck-1"_s, u"alice"_s, {{u"STUCK"_s, 3, {}}});
    FS_VERIFY_OK(retry);
    QCOMPARE(retry->outcome, Outcome::Reserved);
    QVERIFY(test::bookHolds(*engine));
}

void TestServerRaces::unknownOutcomeIsResolvedByTheServer_data()
{
    QTest::addColumn<bool>("committed");
    QTest::newRow("committed, its answer lost") << true;
    QTest::newRow("not committed") << false;
}

void TestServerRaces::unknownOutcomeIsResolvedByTheServer()
{
    // A reserve whose COMMIT went out and whose answer was lost (the server's sessions to the
    // book cut while the COMMIT waits in it), while the book takes no new session, so the
    // server cannot ask again either: the buyer is answered 503 outcome_unknown and the token
    // stays held. The book comes back, and the server resolves the token itself, with no
    // reconcile pass: settled if the order committed; if not, fenced and its units given back
    // once it is the reconciler's safe grace old (10 s, Redis time).
    QFETCH(bool, committed);
    FS_GATED_ENGINE(u"postgresql"_s);
    const QString token = test::addAccessToken(*engine, u"all"_s, AccessScope::Reserve | AccessScope::Read);
    FS_VERIFY_OK(engine->addSku(u"LOST"_s, 10));
    const DbHost pg = fresh.url().hosts.constFirst();
    test::TcpCut relay(pg.host, pg.port);
    QVERIFY(relay.start());
    DbUrl viaRelay = fresh.url();
    viaRelay.hosts = {DbHost{u"127.0.0.1"_s, relay.port()}};
    test::ServerProcess server(viaRelay, redis.url());
    QVERIFY2(server.start(), qPrintable(server.errorString()));
    CommitsHeld held(fresh.url());
    QVERIFY2(held.problem().isEmpty(), qPrintable(held.problem()));

    test::HttpCrowd buyer(server.baseUrl(), token, {reserveRequest(u"lost-1"_s, u"alice"_s, u"LOST"_s, 3)}, 1);
    QVERIFY2(buyer.start(), qPrintable(buyer.errorString()));
    const qint64 pid = held.waitingCommit();
    QVERIFY(pid > 0);
    QCOMPARE(fresh.admitSessions(false), QString());
    auto admit = qScopeGuard([&] { (void)fresh.admitSessions(true); });
    if (committed)
        QVERIFY(relay.cut() >= 1);
    else
        QCOMPARE(held.terminate(pid), QString());
    QVERIFY(buyer.waitForFinished(30000));
    const QJsonObject error = buyer.answers().value(0).value(u"error"_s).toObject();
    QCOMPARE(error.value(u"code"_s).toString(), u"outcome_unknown"_s);
    held.release();
    QVERIFY2(held.problem().isEmpty(), qPrintable(held.problem()));
    if (committed)
        QTRY_COMPARE_WITH_TIMEOUT(FS_OK(engine->book().orderStatus(u"lost-1"_s)), std::optional(OrderStatus::Pending),
                                  10000);
    else
        QCOMPARE(FS_OK(engine->book().orderStatus(u"lost-1"_s)), std::nullopt);
    const QList<GateToken> lost = FS_OK(engine->gate()->openTokens(u"LOST"_s));
    QCOMPARE(lost.size(), 1);
    QCOMPARE(lost.first().state, TokenState::Held);
    QCOMPARE(engine->gateLevels(u"LOST"_s).available, 7);

    admit.dismiss();
    QCOMPARE(fresh.admitSessions(true), QString());
    if (committed) {
        QTRY_COMPARE_WITH_TIMEOUT(FS_OK(engine->gate()->openTokens(u"LOST"_s)).value(0).state, TokenState::Settled,
                                  30000);
        QCOMPARE(engine->gateLevels(u"LOST"_s).available, 7);
        QCOMPARE(FS_OK(engine->book().levels(u"LOST"_s)).locked, 3);
    } else {
        QTRY_COMPARE_WITH_TIMEOUT(engine->gateLevels(u"LOST"_s).available, 10, 30000);
        QCOMPARE(FS_OK(engine->book().orderStatus(u"lost-1"_s)), std::optional(OrderStatus::Abandoned));
        QVERIFY(FS_OK(engine->gate()->openTokens(u"LOST"_s)).isEmpty());
        // The server logs the resolution after it gave the units back.
        QTRY_VERIFY2_WITH_TIMEOUT(server.log().contains(u"reserve of unknown outcome"_s), qPrintable(server.log()),
                                  10000);
    }
    QVERIFY(test::bookHolds(*engine));
}

void TestServerRaces::killUnderLoadLosesNoAnswer()
{
    // kill -9 while 4 client processes send 1600 reserves for 600 units; then a restart and
    // one reconcile pass: every reservation answered reserved is in the book with its token,
    // I1-I4 and I6 hold, the gate agrees with the book (I5), and the server sells again.
    QFETCH(QString, backend);
    FS_SERVED(backend);
    FS_VERIFY_OK(engine->addSku(u"KILL"_s, 600));
    FS_VERIFY_OK(engine->addSku(u"AFTER"_s, 1));
    QStringList orders;
    QList<CurlRequest> buyers;
    for (int i = 0; i < 1600; ++i) {
        orders << u"k-%1"_s.arg(i);
        buyers << reserveRequest(orders.last(), u"buyer-%1"_s.arg(i), u"KILL"_s, 1);
    }
    const qint64 before = FS_OK(engine->book().ledgerCount());
    test::HttpCrowd crowd(server.baseUrl(), token, buyers, 4);
    QVERIFY2(crowd.start(), qPrintable(crowd.errorString()));
    QTRY_VERIFY_WITH_TIMEOUT(FS_OK(engine->book().ledgerCount()) >= before + 100, 20000);
    // A committed batch is answered a moment after its COMMIT: kill only once a buyer has
    // its answer, so the check below has answered reservations to look for.
    QTRY_VERIFY_WITH_TIMEOUT(!answeredReserved(orders, crowd.answers()).isEmpty(), 20000);
    server.kill();
    QVERIFY(crowd.waitForFinished(60000));
    const QList<QJsonObject> answers = crowd.answers();
    const QSet<QString> reserved = answeredReserved(orders, answers);
    const auto unanswered = std::count_if(answers.cbegin(), answers.cend(), [](const QJsonObject &a) { return a.isEmpty(); });
    qInfo("before the kill: %lld reserved, %lld unanswered of %lld", qlonglong(reserved.size()), qlonglong(unanswered),
          qlonglong(answers.size()));
    QVERIFY(!reserved.isEmpty());
    QVERIFY(unanswered > 0); // the kill came under load

    QVERIFY2(server.start(), qPrintable(server.errorString()));
    Reconciler reconciler(*engine);
    FS_VERIFY_OK(reconciler.runPass(0));
    for (qsizetype i = 0; i < orders.size(); ++i) {
        if (!reserved.contains(orders[i]))
            continue;
        const OrderView order = FS_OK(engine->book().order(orders[i]));
        QCOMPARE(order.status, OrderStatus::Pending);
        QCOMPARE(order.lines.value(0).token, tokensOf(answers[i]).value(0));
    }
    const SkuLevels book = FS_OK(engine->book().levels(u"KILL"_s));
    QVERIFY(book.locked >= reserved.size());
    QCOMPARE(engine->gateLevels(u"KILL"_s).available, book.available);
    QVERIFY(test::bookHolds(*engine));
    const QList<QJsonObject> after =
        test::sendAtOnce(server.baseUrl(), token, {reserveRequest(u"k-after"_s, u"late"_s, u"AFTER"_s, 1)}, 1);
    QCOMPARE(test::countResults(after, u"reserved"_s), 1);
}

void TestServerRaces::connectionsSendingTogetherAreAnswered()
{
    // 128 connections of one request thread whose reserves arrive at the same moment are all
    // answered. libmicrohttpd 0.9.75's own polling loop, after an epoll_wait that fills its
    // 128-event buffer, waits again with the whole idle timeout before it reads any of them:
    // under the crowd one request thread's connections stalled for 12-14 s. The server is
    // stopped (SIGSTOP), once idle, while the requests are sent, so all 128 are waiting when
    // it goes on; then they park together and are resumed together. With the idle timeout at 300 s, a
    // stalled thread answers none of them within the 30 s given here.
    QFETCH(QString, backend);
    FS_SERVED(backend, u"--threads"_s, u"1"_s, u"--idle-timeout"_s, u"300"_s);
    FS_VERIFY_OK(engine->addSku(u"BURST"_s, 1000));
    constexpr int kConnections = 128; // libmicrohttpd's epoll event buffer
    std::vector<std::unique_ptr<QTcpSocket>> sockets;
    for (int i = 0; i < kConnections; ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(u"127.0.0.1"_s, quint16(server.port()));
        QVERIFY(socket->waitForConnected(2000));
        socket->write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        QVERIFY(readAnswer(*socket, QDeadlineTimer(5000)).startsWith("HTTP/1.1 200"));
        sockets.push_back(std::move(socket));
    }
    const auto pid = pid_t(server.pid());
    QTRY_VERIFY_WITH_TIMEOUT(allThreadsIn(pid, 'S'), 10000);
    QCOMPARE(::kill(pid, SIGSTOP), 0);
    QTRY_VERIFY_WITH_TIMEOUT(allThreadsIn(pid, 'T'), 10000); // a signal is taken after kill() returns
    for (int i = 0; i < kConnections; ++i) {
        const CurlRequest r = reserveRequest(u"b-%1"_s.arg(i), u"buyer-%1"_s.arg(i), u"BURST"_s, 1);
        sockets[size_t(i)]->write("POST /v1/reservations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                                  + token.toUtf8() + "\r\nContent-Type: application/json\r\nContent-Length: "
                                  + QByteArray::number(r.body.size()) + "\r\n\r\n" + r.body);
        QVERIFY(sockets[size_t(i)]->flush());
    }
    QCOMPARE(::kill(pid, SIGCONT), 0);
    const QDeadlineTimer deadline(30000);
    int reserved = 0;
    for (auto &socket : sockets) {
        const QByteArray answer = readAnswer(*socket, deadline);
        if (answer.startsWith("HTTP/1.1 200") && answer.contains(R"("result":"reserved")"))
            ++reserved;
    }
    QCOMPARE(reserved, kConnections);
    QCOMPARE(FS_OK(engine->book().levels(u"BURST"_s)).locked, kConnections);
}

void TestServerRaces::slowClientsAreCutOff()
{
    // A request (its line, headers and body) must be in within the request timeout of its
    // first byte, however busy its sender looks: a byte every 200 ms keeps the idle timeout
    // (30 s here) away, not the request timeout (2 s). A keep-alive connection waiting longer
    // than the request timeout between two requests is idle, not slow, and is kept.
    FS_SERVED(u"sqlite"_s, u"--request-timeout"_s, u"2"_s, u"--idle-timeout"_s, u"30"_s);
    const int port = server.port();
    auto slowHead = connectFrom(u"127.0.0.1"_s, port);
    QVERIFY(slowHead);
    QElapsedTimer head;
    head.start();
    const QByteArray cutHead
        = trickle(*slowHead, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + QByteArray(200, 'p'), 200, 15000);
    QVERIFY2(slowHead->state() != QAbstractSocket::ConnectedState, "a trickled head held its connection for 15 s");
    QVERIFY2(head.elapsed() >= 1500, qPrintable(u"cut after %1 ms"_s.arg(head.elapsed())));
    QVERIFY2(cutHead.startsWith("HTTP/1.1 408 "), cutHead.constData());

    auto slowBody = connectFrom(u"127.0.0.1"_s, port);
    QVERIFY(slowBody);
    slowBody->write("POST /v1/reservations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token.toLatin1()
                    + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n");
    const QByteArray cutBody = trickle(*slowBody, QByteArray(100, ' '), 200, 15000);
    QVERIFY2(slowBody->state() != QAbstractSocket::ConnectedState, "a trickled body held its connection for 15 s");
    QVERIFY2(cutBody.startsWith("HTTP/1.1 408 "), cutBody.constData());

    auto keptAlive = connectFrom(u"127.0.0.1"_s, port);
    QVERIFY(keptAlive);
    for (int request = 0; request < 2; ++request) {
        if (request > 0)
            QVERIFY2(!keptAlive->waitForDisconnected(3000), "an idle keep-alive connection was closed");
        keptAlive->write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        QVERIFY(readAnswer(*keptAlive, QDeadlineTimer(5000)).startsWith("HTTP/1.1 200 "));
    }
    const QByteArray metrics = test::http("GET", server.baseUrl() + u"/metrics"_s, {}, token, {}).body;
    QCOMPARE(metricValue(metrics, R"(flashstock_http_connections_refused_total{reason="request_timeout"})"), 2.0);
    QTRY_VERIFY_WITH_TIMEOUT(server.log().contains(u"(the request timeout, --request-timeout): answered 408"_s), 5000);
}

void TestServerRaces::connectionLimitsAreLoggedAndCounted()
{
    // At the per-address limit, or at the server's connection limit, a new connection is
    // refused at once, with a log line and a count in /metrics (so an operator sees why
    // clients are turned away).
    FS_SERVED(u"sqlite"_s, u"--max-connections"_s, u"6"_s, u"--per-ip-connections"_s, u"3"_s);
    const int port = server.port();
    auto served = [](QTcpSocket &socket) {
        socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        return readAnswer(socket, QDeadlineTimer(5000)).startsWith("HTTP/1.1 200 ");
    };
    auto refused = [](QTcpSocket &socket) {
        socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        return socket.waitForDisconnected(5000) && socket.readAll().isEmpty();
    };
    std::vector<std::unique_ptr<QTcpSocket>> held;
    auto hold = [&](const QString &from) {
        held.push_back(connectFrom(from, port));
        return held.back() && served(*held.back());
    };
    for (int i = 0; i < 3; ++i)
        QVERIFY(hold(u"127.0.0.1"_s));
    auto overAddress = connectFrom(u"127.0.0.1"_s, port);
    QVERIFY(overAddress && refused(*overAddress));
    for (int i = 0; i < 3; ++i)
        QVERIFY(hold(u"127.0.0.2"_s));
    auto overServer = connectFrom(u"127.0.0.3"_s, port);
    QVERIFY(overServer && refused(*overServer));
    QTRY_VERIFY_WITH_TIMEOUT(server.log().contains(u"127.0.0.1 has 3 open connections, the per-address limit"_s),
                             5000);
    QTRY_VERIFY_WITH_TIMEOUT(server.log().contains(u"6 open connections, the connection limit"_s), 5000);
    // Counted: asked on a connection the server holds already.
    held.front()->write("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token.toLatin1() + "\r\n\r\n");
    const QByteArray metrics = readAnswer(*held.front(), QDeadlineTimer(5000));
    QCOMPARE(metricValue(metrics, R"(flashstock_http_connections_refused_total{reason="per_ip_limit"})"), 1.0);
    QCOMPARE(metricValue(metrics, R"(flashstock_http_connections_refused_total{reason="connection_limit"})"), 1.0);
}

QTEST_GUILESS_MAIN(TestServerRaces)
#include "tst_server_races.moc"
