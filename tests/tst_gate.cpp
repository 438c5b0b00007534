// The Redis gate against a real redis-server: scripts, reserve rules, token lifecycle,
// load/rebuild, script cache loss. Connections and servers: tst_gate_connection.cpp.
#include "gate/Gate.h"
#include "gate/GateKeys.h"
#include "gate/ScriptError.h"
#include "gate/ScriptRegistry.h"
#include "support/RedisFixture.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTest>
#include <QThread>

#include <atomic>
#include <mutex>
#include <thread>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// What a crowd of threads got from the gate.
struct CrowdResult {
    int reserved = 0;
    int outOfStock = 0;
    QStringList failures; ///< error messages, or unexpected codes
    QSet<QString> tokens;
};

/// `threads` threads, each with its own Gate, each reserving `perThread` distinct orders of 1
/// unit. `during` runs on the calling thread while they work.
CrowdResult runCrowd(const RedisUrl &url, const QString &sku, int threads, int perThread,
                     const std::function<void()> &during = {})
{
    CrowdResult result;
    std::mutex mutex;
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            Gate gate(url);
            CrowdResult mine;
            if (auto c = gate.connect(); !c)
                mine.failures << c.error().message;
            ++ready;
            while (ready.load() < threads)
                std::this_thread::yield();
            for (int i = 0; i < perThread; ++i) {
                auto r = gate.reserve(sku, u"o-%1-%2"_s.arg(t).arg(i), u"u%1"_s.arg(t), 1);
                if (!r)
                    mine.failures << r.error().message;
                else if (r->code == GateCode::Reserved) {
                    ++mine.reserved;
                    mine.tokens.insert(r->token);
                } else if (r->code == GateCode::OutOfStock)
                    ++mine.outOfStock;
                else
                    mine.failures << u"unexpected code %1"_s.arg(int(r->code));
            }
            std::lock_guard lock(mutex);
            result.reserved += mine.reserved;
            result.outOfStock += mine.outOfStock;
            result.failures += mine.failures;
            result.tokens.unite(mine.tokens);
        });
    }
    if (during)
        during();
    for (auto &th : pool)
        th.join();
    return result;
}

} // namespace

class TestGate : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<RedisFixture> m_redis;
    std::unique_ptr<Gate> m_gate;

    /// The gate's available of `sku`; a failed call fails the test.
    qint64 available(const QString &sku) { return FS_OK(m_gate->available(sku)); }
    /// One reserve; a failed call fails the test (it is never mistaken for a business answer).
    GateReservation reserve(const QString &sku, const QString &order, qint64 qty, const QString &user = {})
    {
        return FS_OK(m_gate->reserve(sku, order, user, qty));
    }
    /// The per-user units of `sku` as the gate holds them (`u:` fields of its gate hash).
    QHash<QByteArray, QByteArray> userUnits(const QString &sku)
    {
        QHash<QByteArray, QByteArray> out;
        const RedisValue all = FS_OK(m_redis->command({"HGETALL", GateKeys::key(sku, "gate")}));
        for (qsizetype i = 0; i + 1 < all.elements.size(); i += 2)
            if (all.elements[i].str.startsWith("u:"))
                out.insert(all.elements[i].str.mid(2), all.elements[i + 1].str);
        return out;
    }

private slots:
    void initTestCase()
    {
        FLASHSTOCK_REQUIRE_REDIS_SERVER();
        m_redis = std::make_unique<RedisFixture>();
        QVERIFY2(m_redis->start(), qPrintable(m_redis->errorString()));
    }
    void init()
    {
        FS_VERIFY_OK(m_redis->command({"FLUSHALL"}));
        FS_VERIFY_OK(m_redis->command({"CONFIG", "SET", "timeout", "0"}));
        m_gate = std::make_unique<Gate>(m_redis->url());
        FS_VERIFY_OK(m_gate->connect());
    }
    void cleanup() { m_gate.reset(); }

    void scriptShaEqualsScriptLoad()
    {
        const auto &scripts = ScriptRegistry::instance().all();
        QCOMPARE(scripts.size(), 11);
        static const QRegularExpression keysRe(u"KEYS\\[(\\d+)\\]"_s);
        for (const LuaScript &s : scripts) {
            auto r = m_redis->command({"SCRIPT", "LOAD", s.body});
            FS_VERIFY_OK(r);
            QCOMPARE(r->str, s.sha1);
            // Include lines are expanded before hashing.
            QVERIFY2(!s.body.startsWith("--- @include ") && !s.body.contains("\n--- @include "), qPrintable(s.fileName));
            // The NUMKEYS of the file name is the highest KEYS index the script uses.
            int highest = 0;
            for (const auto &m : keysRe.globalMatch(QString::fromUtf8(s.body)))
                highest = qMax(highest, m.captured(1).toInt());
            QVERIFY2(highest == s.numKeys, qPrintable(s.fileName));
        }
    }

    void scriptsExpandAsModelStepsDoes()
    {
        // The protocol model's fingerprints (scripts/model-steps.sh) are of the text Redis runs.
        const QString source = QStringLiteral(FLASHSTOCK_SOURCE_DIR);
        for (const LuaScript &s : ScriptRegistry::instance().all()) {
            QProcess expand;
            expand.start(u"bash"_s, {source + u"/scripts/model-steps.sh"_s, u"--expand"_s,
                                     source + u"/lua/"_s + s.fileName});
            QVERIFY2(expand.waitForFinished(60000), qPrintable(s.fileName));
            QVERIFY2(expand.exitStatus() == QProcess::NormalExit && expand.exitCode() == 0,
                     expand.readAllStandardError().constData());
            QCOMPARE(expand.readAllStandardOutput(), s.body);
        }
    }

    void answerNamesMatchScriptHeaders()
    {
        // The C++ names of the scripts' answers are the names their headers give the codes.
        struct Named {
            const char *file;
            int code;
            const char *name;
        };
        const Named answers[] = {
            {"reserve-2.lua", int(ReserveAnswer::Reserved), "RESERVED"},
            {"reserve-2.lua", int(ReserveAnswer::Existing), "EXISTING"},
            {"release-3.lua", int(ReleaseAnswer::Unchanged), "UNCHANGED"},
            {"release-3.lua", int(ReleaseAnswer::Released), "RELEASED"},
            {"release-3.lua", int(ReleaseAnswer::ReleasedNoKey), "RELEASED_NO_KEY"},
            {"adjust-1.lua", int(AdjustAnswer::NoStockKey), "NO_STOCK_KEY"},
            {"adjust-1.lua", int(AdjustAnswer::Adjusted), "ADJUSTED"},
        };
        for (const Named &a : answers) {
            const auto &all = ScriptRegistry::instance().all();
            auto script = std::find_if(all.cbegin(), all.cend(),
                                       [&](const LuaScript &s) { return s.fileName == QLatin1String(a.file); });
            QVERIFY2(script != all.cend(), a.file);
            const QRegularExpression line(u"\\n\\s+%1 %2\\s"_s.arg(a.code).arg(QLatin1String(a.name)));
            QVERIFY2(line.match(QString::fromUtf8(script->body)).hasMatch(), qPrintable(u"%1: %2 %3"_s.arg(
                                                                                   QLatin1String(a.file)).arg(a.code).arg(QLatin1String(a.name))));
        }
    }

    void reserveDeductsAndRecordsToken()
    {
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 10, false)), 10);
        const auto r = reserve(u"A"_s, u"o1"_s, 3, u"alice"_s);
        QCOMPARE(r.code, GateCode::Reserved);
        QCOMPARE(r.qty, 3);
        QCOMPARE(r.state, TokenState::Held);
        QVERIFY(r.token.startsWith(u"A."_s));
        QCOMPARE(available(u"A"_s), 7);
        const auto open = m_gate->openTokens(u"A"_s);
        FS_VERIFY_OK(open);
        QCOMPARE(open->size(), 1);
        QCOMPARE(open->at(0).token, r.token);
        QCOMPARE(open->at(0).order, u"o1"_s);
        QCOMPARE(open->at(0).user, u"alice"_s);
        QCOMPARE(open->at(0).qty, 3);
        QCOMPARE(open->at(0).state, TokenState::Held);
        const qint64 now = FS_OK(m_gate->nowMs());
        QVERIFY(open->at(0).createdMs <= now && open->at(0).createdMs > now - 5000);
        QCOMPARE(reserve(u"A"_s, u"o2"_s, 8).code, GateCode::OutOfStock);
        QCOMPARE(available(u"A"_s), 7);
    }

    void reserveRejectsBadInput()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        QCOMPARE(m_gate->reserve(u"A{x}"_s, u"o1"_s, {}, 1).error().field, u"sku"_s);
        QCOMPARE(m_gate->reserve(u"A"_s, u"o:1"_s, {}, 1).error().field, u"order"_s);
        QCOMPARE(m_gate->reserve(u"A"_s, u"o1"_s, {}, 0).error().field, u"qty"_s);
        QCOMPARE(m_gate->reserve(u"A"_s, u"o1"_s, {}, 2147483648LL).error().field, u"qty"_s);
        QCOMPARE(available(u"A"_s), 10);
    }

    void reserveIsIdempotentPerOrder()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        const auto first = reserve(u"A"_s, u"o1"_s, 2);
        QCOMPARE(first.code, GateCode::Reserved);
        for (int i = 0; i < 4; ++i) {
            const auto again = reserve(u"A"_s, u"o1"_s, 2);
            QCOMPARE(again.code, GateCode::Existing);
            QCOMPARE(again.token, first.token);
            QCOMPARE(again.qty, 2);
        }
        QCOMPARE(available(u"A"_s), 8);
    }

    void reserveIsIdempotentConcurrently()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        std::vector<std::thread> pool;
        std::mutex mutex;
        QList<GateReservation> answers;
        QStringList failures;
        for (int t = 0; t < 5; ++t) {
            pool.emplace_back([&] {
                Gate gate(m_redis->url());
                auto r = gate.reserve(u"A"_s, u"same"_s, {}, 3);
                std::lock_guard lock(mutex);
                if (r)
                    answers << *r;
                else
                    failures << r.error().message;
            });
        }
        for (auto &th : pool)
            th.join();
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u'\n')));
        QCOMPARE(answers.size(), 5);
        int reserved = 0;
        for (const auto &a : answers) {
            reserved += a.code == GateCode::Reserved;
            QVERIFY(a.code == GateCode::Reserved || a.code == GateCode::Existing);
            QCOMPARE(a.token, answers.first().token);
        }
        QCOMPARE(reserved, 1);
        QCOMPARE(available(u"A"_s), 7);
        QCOMPARE(FS_OK(m_gate->openTokens(u"A"_s)).size(), 1);
    }

    void crowdTakesExactlyTheStock()
    {
        FS_VERIFY_OK(m_gate->load(u"HOT"_s, 1000, false));
        QElapsedTimer timer;
        timer.start();
        const CrowdResult r = runCrowd(m_redis->url(), u"HOT"_s, 32, 100);
        qInfo("32 x 100 reserves in %lld ms", timer.elapsed());
        QVERIFY2(r.failures.isEmpty(), qPrintable(r.failures.mid(0, 5).join(u'\n')));
        QCOMPARE(r.reserved, 1000);
        QCOMPARE(r.outOfStock, 2200);
        QCOMPARE(r.tokens.size(), 1000);
        QCOMPARE(available(u"HOT"_s), 0);
        QCOMPARE(FS_OK(m_gate->openTokens(u"HOT"_s)).size(), 1000);
    }

    void scriptFlushDuringCrowdFailsNothing()
    {
        FS_VERIFY_OK(m_gate->load(u"HOT"_s, 1000, false));
        int flushes = 0;
        const CrowdResult r = runCrowd(m_redis->url(), u"HOT"_s, 32, 100, [&] {
            RedisConnection admin(m_redis->url());
            for (int i = 0; i < 3; ++i) {
                QThread::msleep(40);
                auto f = admin.command({"SCRIPT", "FLUSH"});
                flushes += f && f->str == "OK";
            }
        });
        QCOMPARE(flushes, 3);
        QVERIFY2(r.failures.isEmpty(), qPrintable(r.failures.mid(0, 5).join(u'\n')));
        QCOMPARE(r.reserved, 1000);
        QCOMPARE(available(u"HOT"_s), 0);
    }

    void perUserLimitLeavesGateUntouched()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 100, false));
        FS_VERIFY_OK(m_gate->setSale(u"A"_s, GateSale{true, 0, 0, 3}));
        const auto first = reserve(u"A"_s, u"o1"_s, 2, u"bob"_s);
        QCOMPARE(first.code, GateCode::Reserved);
        QCOMPARE(reserve(u"A"_s, u"o2"_s, 1, u"bob"_s).code, GateCode::Reserved);

        const auto keysBefore = FS_OK(m_redis->command({"KEYS", "*"})).elements.size();
        const auto reservedBefore = FS_OK(m_gate->counts(u"A"_s)).reserved;
        QCOMPARE(reserve(u"A"_s, u"o3"_s, 1, u"bob"_s).code, GateCode::LimitExceeded);
        QCOMPARE(available(u"A"_s), 97);
        QCOMPARE(FS_OK(m_redis->command({"KEYS", "*"})).elements.size(), keysBefore);
        QCOMPARE(FS_OK(m_gate->counts(u"A"_s)).reserved, reservedBefore);
        QCOMPARE(FS_OK(m_gate->counts(u"A"_s)).limitExceeded, 1); // the only write: its counter
        QCOMPARE(FS_OK(m_redis->command({"HGET", GateKeys::key(u"A"_s, "gate"), "o:o3"})).type,
                 RedisValue::Type::Nil);
        QCOMPARE(FS_OK(m_gate->openTokens(u"A"_s)).size(), 2);
        QCOMPARE(reserve(u"A"_s, u"o4"_s, 3, u"carol"_s).code, GateCode::Reserved);

        // Releasing gives quota back.
        QCOMPARE(FS_OK(m_gate->release(u"A"_s, first.token)), true);
        QCOMPARE(reserve(u"A"_s, u"o3"_s, 2, u"bob"_s).code, GateCode::Reserved);
        // A sale with a limit needs a user.
        auto anonymous = m_gate->reserve(u"A"_s, u"o9"_s, {}, 1);
        QVERIFY(!anonymous);
        QCOMPARE(anonymous.error().code, ErrorCode::InvalidArgument);
        QCOMPARE(anonymous.error().field, u"user"_s);
    }

    void saleWindowIsEnforced()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 100, false));
        const qint64 now = FS_OK(m_gate->nowMs());
        FS_VERIFY_OK(m_gate->setSale(u"A"_s, GateSale{false, 0, 0, 0}));
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1).code, GateCode::SaleClosed);
        FS_VERIFY_OK(m_gate->setSale(u"A"_s, GateSale{true, now + 60000, 0, 0}));
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1).code, GateCode::SaleClosed);
        FS_VERIFY_OK(m_gate->setSale(u"A"_s, GateSale{true, now - 60000, now - 1000, 0}));
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1).code, GateCode::SaleClosed);
        QCOMPARE(available(u"A"_s), 100);
        FS_VERIFY_OK(m_gate->setSale(u"A"_s, GateSale{true, now - 60000, now + 60000, 0}));
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1).code, GateCode::Reserved);
        FS_VERIFY_OK(m_gate->setSale(u"A"_s, GateSale{false, 0, 0, 0}));
        QCOMPARE(reserve(u"A"_s, u"o2"_s, 1).code, GateCode::SaleClosed);
        FS_VERIFY_OK(m_gate->clearSale(u"A"_s));
        QCOMPARE(reserve(u"A"_s, u"o2"_s, 1).code, GateCode::Reserved);
        QCOMPARE(available(u"A"_s), 98);
        QVERIFY(!m_gate->setSale(u"A"_s, GateSale{true, 10, 5, 0}).has_value());
    }

    void pausedRefusesReserves()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        const auto held = reserve(u"A"_s, u"o1"_s, 1);
        FS_VERIFY_OK(m_gate->setPaused(u"A"_s, true));
        FS_VERIFY_OK(m_gate->setPaused(u"A"_s, true));
        QCOMPARE(reserve(u"A"_s, u"o2"_s, 1).code, GateCode::Paused);
        // An order that already holds its token still gets it back (nothing moves).
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1).code, GateCode::Existing);
        QCOMPARE(available(u"A"_s), 9);
        FS_VERIFY_OK(m_gate->setPaused(u"A"_s, false));
        QCOMPARE(reserve(u"A"_s, u"o2"_s, 1).code, GateCode::Reserved);
        QVERIFY(held.code == GateCode::Reserved);
    }

    void countsReservesAndRefusals()
    {
        QCOMPARE(FS_OK(m_gate->counts(u"A"_s)).refused(), 0); // nothing yet: all zero
        FS_VERIFY_OK(m_gate->load(u"A"_s, 2, false));
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1, u"bob"_s).code, GateCode::Reserved);
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1, u"bob"_s).code, GateCode::Existing); // a repeat counts nothing
        QCOMPARE(reserve(u"A"_s, u"o2"_s, 2).code, GateCode::OutOfStock);
        FS_VERIFY_OK(m_gate->setPaused(u"A"_s, true));
        QCOMPARE(reserve(u"A"_s, u"o3"_s, 1).code, GateCode::Paused);
        FS_VERIFY_OK(m_gate->setPaused(u"A"_s, false));
        FS_VERIFY_OK(m_gate->setSale(u"A"_s, GateSale{false, 0, 0, 1}));
        QCOMPARE(reserve(u"A"_s, u"o4"_s, 1, u"bob"_s).code, GateCode::SaleClosed);
        FS_VERIFY_OK(m_gate->setSale(u"A"_s, GateSale{true, 0, 0, 1}));
        QCOMPARE(reserve(u"A"_s, u"o5"_s, 1, u"bob"_s).code, GateCode::LimitExceeded);
        QCOMPARE(reserve(u"A"_s, u"o6"_s, 1, u"eve"_s).code, GateCode::Reserved);
        // Bad input is an error, not a refusal: not counted.
        QVERIFY(!m_gate->reserve(u"A"_s, u"o7"_s, {}, 1));
        // A refusal the book made behind the gate is counted by the engine.
        FS_VERIFY_OK(m_gate->countRefusal(u"A"_s, Outcome::OutOfStock));
        auto notRefusal = m_gate->countRefusal(u"A"_s, Outcome::Reserved);
        QVERIFY(!notRefusal);
        QCOMPARE(notRefusal.error().code, ErrorCode::InvalidArgument);
        QCOMPARE(notRefusal.error().field, u"outcome"_s);
        const GateCounts c = FS_OK(m_gate->counts(u"A"_s));
        QCOMPARE(c.reserved, 2);
        QCOMPARE(c.outOfStock, 2);
        QCOMPARE(c.paused, 1);
        QCOMPARE(c.saleClosed, 1);
        QCOMPARE(c.limitExceeded, 1);
        QCOMPARE(c.refused(), 5);
        QCOMPARE(FS_OK(m_gate->counts(u"B"_s)).reserved, 0); // per SKU
    }

    void refusalUnderMaxmemoryIsStillARefusal()
    {
        // A full Redis (maxmemory, noeviction) refuses writes with OOM. The refusal counter
        // is a write, so it must not turn a sold-out answer into an error.
        FS_VERIFY_OK(m_gate->load(u"A"_s, 1, false));
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1).code, GateCode::Reserved);
        FS_VERIFY_OK(m_redis->command({"CONFIG", "SET", "maxmemory-policy", "noeviction"}));
        FS_VERIFY_OK(m_redis->command({"CONFIG", "SET", "maxmemory", "1"}));
        auto full = m_gate->reserve(u"A"_s, u"o2"_s, {}, 1);
        FS_VERIFY_OK(m_redis->command({"CONFIG", "SET", "maxmemory", "0"}));
        QVERIFY2(full.has_value(), qPrintable(full ? QString() : full.error().message));
        QCOMPARE(full->code, GateCode::OutOfStock);
        QCOMPARE(FS_OK(m_gate->counts(u"A"_s)).outOfStock, 0); // not counted, not failed
    }

    void missingStockKeyIsNotOutOfStock()
    {
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1).code, GateCode::NoStockKey);
        QCOMPARE(FS_OK(m_gate->available(u"A"_s)), -1);
        FS_VERIFY_OK(m_gate->load(u"A"_s, 5, false));
        QCOMPARE(reserve(u"A"_s, u"o1"_s, 1).code, GateCode::Reserved);
        FS_VERIFY_OK(m_redis->command({"HDEL", GateKeys::key(u"A"_s, "gate"), "available"}));
        QCOMPARE(reserve(u"A"_s, u"o2"_s, 1).code, GateCode::NoStockKey);
        QCOMPARE(FS_OK(m_gate->available(u"A"_s)), -1);
    }

    void corruptStateFailsBeforeAnyWrite()
    {
        // A Lua error does not roll back: the scripts validate before their first write.
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        const auto held = reserve(u"A"_s, u"o1"_s, 1, u"eve"_s);
        FS_VERIFY_OK(m_redis->command({"HSET", GateKeys::key(u"A"_s, "gate"), "u:eve", "x"}));
        auto r = m_gate->reserve(u"A"_s, u"o2"_s, u"eve"_s, 1);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::Internal);
        QVERIFY2(r.error().message.contains(u"corrupt"_s), qPrintable(r.error().message));
        QCOMPARE(m_gate->release(u"A"_s, held.token).error().code, ErrorCode::Internal);
        QCOMPARE(available(u"A"_s), 9);
        QCOMPARE(FS_OK(m_gate->openTokens(u"A"_s)).size(), 1);
    }

    void setUserUnitsReplacesTheCounts()
    {
        FS_VERIFY_OK(m_redis->command({"HSET", GateKeys::key(u"A"_s, "gate"), "u:zed", "5", "u:bob", "1"}));
        // 100 characters of two bytes each: a valid user id of 200 bytes.
        const QString accented(100, QChar(0xe9));
        auto set = m_gate->setUserUnits(u"A"_s, {{u"bob"_s, 3}, {u"carol"_s, 1}, {accented, 2}});
        QVERIFY2(set.has_value(), qPrintable(set ? QString() : set.error().message));
        QCOMPARE(*set, 3);
        QCOMPARE(userUnits(u"A"_s),
                 (QHash<QByteArray, QByteArray>{{"bob", "3"}, {"carol", "1"}, {accented.toUtf8(), "2"}}));
        QCOMPARE(m_gate->setUserUnits(u"A"_s, {{u"bob"_s, 0}}).error().code, ErrorCode::InvalidArgument);
        QCOMPARE(FS_OK(m_gate->setUserUnits(u"A"_s, {})), 0); // nobody holds anything
        QVERIFY(userUnits(u"A"_s).isEmpty());
    }

    void corruptCountersNeverStopSelling()
    {
        // The counters are best effort: unreadable ones cost the console its rates, never a sale.
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        FS_VERIFY_OK(m_redis->command({"HSET", GateKeys::key(u"A"_s, "gate"), "n:reserved", "not-a-number"}));
        const auto first = reserve(u"A"_s, u"o1"_s, 1);
        QCOMPARE(first.code, GateCode::Reserved);
        QVERIFY2(first.token.endsWith(u".oo1"_s), qPrintable(first.token)); // unique by its order instead
        QCOMPARE(m_gate->counts(u"A"_s).error().code, ErrorCode::Internal);
        FS_VERIFY_OK(m_redis->command({"HSET", GateKeys::key(u"A"_s, "gate"), "n:out_of_stock", "x"}));
        QCOMPARE(reserve(u"A"_s, u"o2"_s, 1).code, GateCode::Reserved);
        QCOMPARE(reserve(u"A"_s, u"o3"_s, 9).code, GateCode::OutOfStock);
        QCOMPARE(available(u"A"_s), 8);
        QVERIFY(!m_gate->counts(u"A"_s));
        FS_VERIFY_OK(m_gate->clearCounts(u"A"_s));
        QCOMPARE(FS_OK(m_gate->counts(u"A"_s)).reserved, 0);
        QCOMPARE(reserve(u"A"_s, u"o4"_s, 1).code, GateCode::Reserved);
        QCOMPARE(FS_OK(m_gate->counts(u"A"_s)).reserved, 1);
    }

    void releaseIsIdempotent()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        const auto held = reserve(u"A"_s, u"o1"_s, 4, u"dave"_s);
        QCOMPARE(available(u"A"_s), 6);
        QCOMPARE(FS_OK(m_gate->release(u"A"_s, held.token)), true);
        QCOMPARE(available(u"A"_s), 10);
        for (int i = 0; i < 3; ++i)
            QCOMPARE(FS_OK(m_gate->release(u"A"_s, held.token)), false);
        QCOMPARE(available(u"A"_s), 10);
        QCOMPARE(FS_OK(m_redis->command({"HEXISTS", GateKeys::key(u"A"_s, "gate"), "u:dave"})).integer, 0);
        // A released token cannot be settled or sold afterwards.
        QCOMPARE(m_gate->settle(u"A"_s, held.token).error().code, ErrorCode::Conflict);
        QCOMPARE(m_gate->markSold(u"A"_s, held.token).error().code, ErrorCode::Conflict);
        // A released token is a dead attempt: a retry of the order is a new one, with a
        // fresh token (the book decides whether the order may hold it).
        const auto again = reserve(u"A"_s, u"o1"_s, 4);
        QCOMPARE(again.code, GateCode::Reserved);
        QVERIFY(again.token != held.token);
        QCOMPARE(again.state, TokenState::Held);
        QCOMPARE(available(u"A"_s), 6);
        QCOMPARE(FS_OK(m_gate->release(u"A"_s, again.token)), true);
        auto unknown = m_gate->release(u"A"_s, u"A.nope.1"_s);
        QVERIFY(!unknown);
        QCOMPARE(unknown.error().code, ErrorCode::InvalidArgument);
        QCOMPARE(unknown.error().field, u"token"_s);
    }

    void tokenLifecycle()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        const auto a = reserve(u"A"_s, u"oa"_s, 1);
        const auto b = reserve(u"A"_s, u"ob"_s, 2);
        const auto c = reserve(u"A"_s, u"oc"_s, 3);
        FS_VERIFY_OK(m_gate->settle(u"A"_s, a.token));
        FS_VERIFY_OK(m_gate->settle(u"A"_s, a.token)); // idempotent
        FS_VERIFY_OK(m_gate->settle(u"A"_s, b.token));
        FS_VERIFY_OK(m_gate->markSold(u"A"_s, b.token));
        FS_VERIFY_OK(m_gate->markSold(u"A"_s, b.token)); // idempotent
        FS_VERIFY_OK(m_gate->settle(u"A"_s, b.token));   // sold stays sold
        QCOMPARE(FS_OK(m_gate->release(u"A"_s, b.token)), false);     // sold units stay sold
        QCOMPARE(available(u"A"_s), 4);
        auto open = FS_OK(m_gate->openTokens(u"A"_s));
        QCOMPARE(open.size(), 2);
        QCOMPARE(open[0].token, c.token); // held first
        QCOMPARE(open[0].state, TokenState::Held);
        QCOMPARE(open[1].token, a.token);
        QCOMPARE(open[1].state, TokenState::Settled);
        // A settled token can still be released (the order was closed): units back once.
        QCOMPARE(FS_OK(m_gate->release(u"A"_s, a.token)), true);
        QCOMPARE(available(u"A"_s), 5);
        // Held -> sold directly when the settle was lost.
        FS_VERIFY_OK(m_gate->markSold(u"A"_s, c.token));
        QVERIFY(FS_OK(m_gate->openTokens(u"A"_s)).isEmpty());
        QCOMPARE(reserve(u"A"_s, u"oc"_s, 3).state, TokenState::Sold);
    }

    void pipelineAnswersEachLineOnItsOwn()
    {
        QVERIFY(m_gate->load(u"A"_s, 2, false).has_value());
        QVERIFY(m_gate->load(u"B"_s, 1, false).has_value());
        QVERIFY(m_gate->setPaused(u"C"_s, true).has_value());
        const QList<GateReserveLine> lines{{u"A"_s, u"p1"_s, {}, 2}, {u"B"_s, u"p2"_s, {}, 1}, {u"B"_s, u"p3"_s, {}, 1},
                                           {u"A{"_s, u"p4"_s, {}, 1},  {u"C"_s, u"p5"_s, {}, 1}, {u"D"_s, u"p6"_s, {}, 1},
                                           {u"A"_s, u"p1"_s, {}, 2},   {u"B"_s, u"p7"_s, {}, 0}};
        const auto r = m_gate->reservePipeline(lines);
        QCOMPARE(r.size(), lines.size());
        QList<int> codes;
        for (const auto &one : r)
            codes << (one ? int(one->code) : -1);
        QCOMPARE(codes, (QList<int>{int(GateCode::Reserved), int(GateCode::Reserved), int(GateCode::OutOfStock), -1,
                                    int(GateCode::Paused), int(GateCode::NoStockKey), int(GateCode::Existing), -1}));
        QCOMPARE(r[3].error().field, u"sku"_s);
        QCOMPARE(r[6]->token, r[0]->token); // the same order again in one pipeline
        QCOMPARE(r[7].error().field, u"qty"_s);
        QCOMPARE(available(u"A"_s), 0);
        QCOMPARE(available(u"B"_s), 0);
        QVERIFY(m_gate->reservePipeline({}).isEmpty());
        const GateHealth h = m_gate->health();
        QCOMPARE(h.nodes.size(), 1);
        QCOMPARE(h.nodes.first().role, GateNodeHealth::Role::Single);
        QVERIFY(h.nodes.first().reachable && h.nodes.first().scriptsLoaded);
    }

    void settleBatchPipelines()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 100, false));
        QList<GateReserveRequest> requests;
        for (int i = 0; i < 50; ++i)
            requests.append({u"b%1"_s.arg(i), QString(), 1});
        auto reserved = m_gate->reserveBatch(u"A"_s, requests);
        FS_VERIFY_OK(reserved);
        QCOMPARE(reserved->size(), 50);
        QList<QString> tokens;
        for (const auto &r : *reserved) {
            QCOMPARE(r.code, GateCode::Reserved);
            tokens << r.token;
        }
        QCOMPARE(available(u"A"_s), 50);
        FS_VERIFY_OK(m_redis->command({"SCRIPT", "FLUSH"}));
        FS_VERIFY_OK(m_gate->settleBatch(u"A"_s, tokens));
        const auto open = FS_OK(m_gate->openTokens(u"A"_s));
        QCOMPARE(open.size(), 50);
        for (const auto &t : open)
            QCOMPARE(t.state, TokenState::Settled);
        FS_VERIFY_OK(m_gate->settleBatch(u"A"_s, tokens)); // idempotent
        QCOMPARE(m_gate->settleBatch(u"A"_s, {u"A.missing.1"_s}).error().code,
                 ErrorCode::InvalidArgument);
    }

    void settlePipelineAnswersEachToken()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        FS_VERIFY_OK(m_gate->load(u"B"_s, 10, false));
        const auto a = reserve(u"A"_s, u"p1"_s, 1);
        const auto b = reserve(u"B"_s, u"p2"_s, 2);
        const auto gone = reserve(u"A"_s, u"p3"_s, 1);
        QCOMPARE(FS_OK(m_gate->release(u"A"_s, gone.token)), true);
        FS_VERIFY_OK(m_redis->command({"SCRIPT", "FLUSH"})); // loaded again, the pipeline retried
        const QList<Result<void>> settled = m_gate->settlePipeline(
            {{u"A"_s, a.token}, {u"A"_s, QString()}, {u"B"_s, b.token}, {u"A"_s, gone.token}});
        QCOMPARE(settled.size(), 4);
        FS_VERIFY_OK(settled[0]);
        QCOMPARE(settled[1].error().code, ErrorCode::InvalidArgument); // not sent
        FS_VERIFY_OK(settled[2]);
        QCOMPARE(settled[3].error().code, ErrorCode::Conflict); // released: cannot be settled
        for (const QString &sku : {u"A"_s, u"B"_s}) {
            const auto open = FS_OK(m_gate->openTokens(sku));
            QCOMPARE(open.size(), 1);
            QCOMPARE(open.first().state, TokenState::Settled);
        }
        QCOMPARE(available(u"A"_s), 9);
        QCOMPARE(available(u"B"_s), 8);
        QVERIFY(m_gate->settlePipeline({}).isEmpty());
    }

    void loadIsNetOfTheTokensTheBookDidNotCount()
    {
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 100, false)), 100);
        const auto held = reserve(u"A"_s, u"o1"_s, 10);
        const auto settled = reserve(u"A"_s, u"o2"_s, 5);
        FS_VERIFY_OK(m_gate->settle(u"A"_s, settled.token));
        QCOMPARE(available(u"A"_s), 85);
        // Only if absent: a present key is left alone.
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 500, false)), 85);
        QCOMPARE(available(u"A"_s), 85);
        // Book after the settled order committed: 95 available, o2 booked. Held o1 is not in
        // the book.
        qint64 since = -1;
        FS_VERIFY_OK(m_gate->openTokens(u"A"_s, &since));
        QVERIFY(since > 0);
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 95, true, since, {settled.token})), 85);
        // o2 not booked (its order released in the book, the gate's release to come): its
        // units are in the book's 100 and still deducted here.
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 100, true, since, {})), 85);
        FS_VERIFY_OK(m_redis->command({"HDEL", GateKeys::key(u"A"_s, "gate"), "available"}));
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 95, false, since, {settled.token})), 85);
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 3, true, since, {settled.token})), 0); // never negative
        // A token sold after the snapshot, which the book read before it committed: off too.
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 95, true, since, {settled.token})), 85);
        const auto sold = reserve(u"A"_s, u"o3"_s, 2);
        FS_VERIFY_OK(m_gate->settle(u"A"_s, sold.token));
        FS_VERIFY_OK(m_gate->markSold(u"A"_s, sold.token));
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 95, true, since, {settled.token})), 83);
        // Without a snapshot (-1) only the open tokens are looked at.
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 95, true, -1, {settled.token})), 85);
        // A released token is not netted out: its units went back to the book.
        QCOMPARE(FS_OK(m_gate->release(u"A"_s, held.token)), true);
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 95, true, since, {settled.token})), 93);
        QVERIFY(!m_gate->load(u"A"_s, -1, true).has_value());
        QVERIFY(!m_gate->load(u"A"_s, 5, true, -2).has_value());
    }

    void releaseWithoutStockKeyCountsOnNextLoad()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        const auto held = reserve(u"A"_s, u"o1"_s, 4);
        FS_VERIFY_OK(m_redis->command({"HDEL", GateKeys::key(u"A"_s, "gate"), "available"}));
        QCOMPARE(FS_OK(m_gate->release(u"A"_s, held.token)), true);
        QCOMPARE(available(u"A"_s), -1); // not recreated with a wrong value
        QCOMPARE(FS_OK(m_gate->load(u"A"_s, 10, false)), 10);
    }

    void adjustOnlyWhenKeyExists()
    {
        QCOMPARE(FS_OK(m_gate->adjust(u"A"_s, 5)), false);
        QCOMPARE(available(u"A"_s), -1);
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        QCOMPARE(FS_OK(m_gate->adjust(u"A"_s, 5)), true);
        QCOMPARE(available(u"A"_s), 15);
        QCOMPARE(FS_OK(m_gate->adjust(u"A"_s, -20)), true);
        QCOMPARE(available(u"A"_s), 0);
    }

    void finishedTokensArePurgedAfterRetention()
    {
        FS_VERIFY_OK(m_gate->load(u"A"_s, 10, false));
        m_gate->setTokenRetentionSeconds(0);
        const auto first = reserve(u"A"_s, u"o1"_s, 1);
        QCOMPARE(FS_OK(m_gate->release(u"A"_s, first.token)), true);
        const QByteArray gateKey = GateKeys::key(u"A"_s, "gate");
        QCOMPARE(FS_OK(m_redis->command({"HEXISTS", gateKey, "t:" + first.token.toUtf8()})).integer, 0);
        QCOMPARE(FS_OK(m_redis->command({"HEXISTS", gateKey, "o:o1"})).integer, 0);
        QCOMPARE(FS_OK(m_redis->command({"ZCARD", GateKeys::key(u"A"_s, "done")})).integer, 0);
        // Past its retention an order is new again to the gate.
        const auto second = reserve(u"A"_s, u"o1"_s, 1);
        QCOMPARE(second.code, GateCode::Reserved);
        QVERIFY(second.token != first.token);
        QCOMPARE(available(u"A"_s), 9);
    }

    void healthReportsScriptCache()
    {
        GateHealth h = m_gate->health();
        QVERIFY(h.reachable);
        QVERIFY(h.scriptsLoaded);
        QVERIFY(h.roundTripUs > 0);
        FS_VERIFY_OK(m_redis->command({"SCRIPT", "FLUSH"}));
        h = m_gate->health();
        QVERIFY(h.reachable);
        QVERIFY(!h.scriptsLoaded);
        QVERIFY(!h.detail.isEmpty());
        FS_VERIFY_OK(m_gate->load(u"A"_s, 1, false)); // reloads on NOSCRIPT
        QVERIFY(m_gate->health().scriptsLoaded);
        Gate nowhere(RedisUrl::tcp(u"127.0.0.1"_s, 1));
        h = nowhere.health();
        QVERIFY(!h.reachable);
        QVERIFY(!h.detail.isEmpty());
    }

};

QTEST_GUILESS_MAIN(TestGate)
#include "tst_gate.moc"
#include "support/TestChecks.h"
