// The protocol model's crash points on the real engine (tests/model/*.pml, README
// "The protocol, model-checked"): each test stops an actor at the point where the model
// crashes it, with the seams the drill uses (the engine's reserve phases, the book's steps
// called alone, the db-error write fault, a stock key deleted), or runs another actor's
// steps inside a gate restore (GateRestore's step seam). Afterwards the model's
// properties: I1, I4, I6 (the book's own check), G3 (the gate never counts a unit twice)
// and, once the reconciler has run, I5 (the gate equals the book, no token held).
// Real redis-server (RedisFixture), SQLite.
//
// The model's crash points (CRASHPOINT, before the step named) and their tests here:
// reserve.book, reserve.giveback, reserve.release-extra, reserve.settle,
// confirm.mark-sold, release.gate, expire.gate, release.record (expire.record alike):
// crashBefore<Step>; restore.load, restore.unpause and a rebuild's failed pause:
// crashBeforeRestoreLoad. A crash before
// restore.pause, confirm.book, release.book or a reconcile pass follows no effect of its
// actor's, so it leaves what never starting leaves.

#include "Engine.h"
#include "GateRestore.h"
#include "gate/Gate.h"
#include "gate/GateKeys.h"
#include "reconcile/Reconciler.h"
#include "store/Database.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"
#include "support/RedisFixture.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

const QString kSku = u"A"_s;

/// A reserve of 1 unit of A for `order`, stopped after its gate step (Engine::passGate):
/// the model's reserve.gate done, reserve.book not yet.
ReserveAttempt pastGate(Engine &engine, const QString &order)
{
    auto request = Engine::checkReserve(order, u"u-"_s + order, {{kSku, 1, {}}}, 60);
    if (!request)
        qFatal("checkReserve: %s", qPrintable(request.error().message));
    ReserveAttempt attempt = engine.planReserve(*request);
    engine.passGate({&attempt});
    return attempt;
}

/// The attempt's book step (Engine::prepareBook, then the book's transaction) without what
/// follows it (Engine::applyBook: the settle or the give-back): reserve.book done.
Result<ReserveResult> bookStep(Engine &engine, ReserveAttempt &attempt)
{
    auto order = engine.prepareBook(attempt);
    if (!order)
        return *attempt.answer;
    return engine.book().reserveBatch({*order}).constFirst();
}

/// G3: gate available plus the units of the open tokens the book does not hold for a live
/// order is at most book available (the gate never lets through a reserve the book cannot
/// take). An absent stock key holds it trivially.
bool gateCountsOnce(Engine &engine)
{
    const qint64 gate = engine.gateLevels(kSku).available;
    const qint64 book = FS_OK(engine.book().levels(kSku)).available;
    if (gate < 0)
        return true;
    qint64 unbooked = 0;
    for (const GateToken &t : FS_OK(engine.gate()->openTokens(kSku))) {
        auto o = FS_OK(engine.book().orderOnSku(t.order, kSku));
        const bool live = o && o->token == t.token
            && (o->status == OrderStatus::Pending || o->status == OrderStatus::Paid);
        if (!live)
            unbooked += t.qty;
    }
    if (gate + unbooked > book)
        qWarning("G3: gate %lld + unbooked tokens %lld > book %lld", gate, unbooked, book);
    return gate + unbooked <= book;
}

/// I5 once requests stop: two reconcile passes (no grace), then the gate's stock equals the
/// book's and no token is held.
bool reconciledQuiet(Engine &engine)
{
    Reconciler reconciler(engine);
    for (int pass = 0; pass < 2; ++pass)
        if (auto r = reconciler.runPass(0); !r) {
            qWarning("reconcile: %s", qPrintable(r.error().message));
            return false;
        }
    const qint64 gate = engine.gateLevels(kSku).available;
    const qint64 book = FS_OK(engine.book().levels(kSku)).available;
    const qint64 held = FS_OK(engine.gate()->heldCount(kSku));
    if (gate != book || held != 0)
        qWarning("I5: gate %lld, book %lld, held %lld", gate, book, held);
    return gate == book && held == 0;
}

/// The db-error seam: fails the named order's part of its book batch, once.
class FailOrder : public WriteFaults {
public:
    explicit FailOrder(QString order) : m_order(std::move(order)) {}
    bool failBeforeCommit() override { return false; }
    bool failOrder(const QString &order) override { return std::exchange(m_armed, false) && order == m_order; }

private:
    QString m_order;
    bool m_armed = true;
};

} // namespace

/// In a test function: a fresh SQLite book, a redis-server of its own, an engine on both
/// and SKU A with `stock` units.
#define FS_STEP_ENGINE(stock)                                                                                      \
    FS_GATED_ENGINE(u"sqlite"_s);                                                                                  \
    FS_VERIFY_OK(engine->addSku(kSku, stock))

/// I1, I4, I6 and G3 now.
#define FS_SAFE(engine)                                                                                            \
    do {                                                                                                           \
        QVERIFY(test::bookHolds(engine));                                                                          \
        QVERIFY(gateCountsOnce(engine));                                                                           \
    } while (false)

/// I1, I4, I6 and G3 now; then the reconciler runs, and I5 and the rest hold after it.
#define FS_SAFE_THEN_HEALED(engine)                                                                                \
    do {                                                                                                           \
        FS_SAFE(engine);                                                                                           \
        QVERIFY(reconciledQuiet(engine));                                                                          \
        FS_SAFE(engine);                                                                                           \
    } while (false)

class TestProtocolSteps : public QObject {
    Q_OBJECT

private slots:
    // Crash points (model step the actor stops before).
    void crashBeforeReserveBook();
    void crashBeforeReserveGiveback();
    void crashBeforeReserveReleaseExtra();
    void crashBeforeReserveSettle();
    void crashBeforeConfirmMarkSold();
    void crashBeforeReleaseGate();
    void crashBeforeExpireGate();
    void crashBeforeReleaseRecord();
    void crashBeforeRestoreLoad();
    // The double count the model found: a restore while another actor moves a unit.
    void restoreWhileAReserveCompletes_data();
    void restoreWhileAReserveCompletes();
    void rebuildWhileAReleaseCompletes_data();
    void rebuildWhileAReleaseCompletes();
};

void TestProtocolSteps::crashBeforeReserveBook()
{
    FS_STEP_ENGINE(1);
    ReserveAttempt a = pastGate(*engine, u"o1"_s);
    QVERIFY(!a.answer);
    QCOMPARE(a.created.size(), 1);
    FS_SAFE_THEN_HEALED(*engine); // given back, the order fenced
    QCOMPARE(FS_OK(engine->book().orderStatus(u"o1"_s)), OrderStatus::Abandoned);
}

void TestProtocolSteps::crashBeforeReserveGiveback()
{
    FS_STEP_ENGINE(1);
    FailOrder fault(u"o1"_s);
    engine->database().setWriteFaults(&fault);
    ReserveAttempt a = pastGate(*engine, u"o1"_s);
    auto booked = bookStep(*engine, a);
    engine->database().setWriteFaults(nullptr);
    QVERIFY(!booked); // the book failed; the engine dies before it gives the token back
    FS_SAFE_THEN_HEALED(*engine);
}

void TestProtocolSteps::crashBeforeReserveReleaseExtra()
{
    FS_STEP_ENGINE(2);
    const QString first = FS_OK(engine->reserve(u"o1"_s, u"u-o1"_s, {{kSku, 1, {}}})).lines.first().token;
    // The gate lost the order's mapping: the client's retry gets a new token, and the book
    // answers from the order it holds (the first token); the new one is extra.
    FS_VERIFY_OK(redis.command({"HDEL", GateKeys::key(kSku, "gate"), "o:o1"}));
    ReserveAttempt a = pastGate(*engine, u"o1"_s);
    QCOMPARE(a.created.size(), 1);
    auto booked = FS_OK(bookStep(*engine, a));
    QCOMPARE(booked.outcome, Outcome::Reserved);
    QCOMPARE(booked.lines.first().token, first);
    QVERIFY(a.created.first().token != first); // the engine dies before it releases this one
    FS_SAFE_THEN_HEALED(*engine); // the extra token given back
    QCOMPARE(FS_OK(engine->book().orderStatus(u"o1"_s)), OrderStatus::Pending);
}

void TestProtocolSteps::crashBeforeReserveSettle()
{
    FS_STEP_ENGINE(1);
    ReserveAttempt a = pastGate(*engine, u"o1"_s);
    QCOMPARE(FS_OK(bookStep(*engine, a)).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(engine->gate()->heldCount(kSku)), 1);
    FS_SAFE_THEN_HEALED(*engine); // settled by the reconciler
    QCOMPARE(FS_OK(engine->book().orderStatus(u"o1"_s)), OrderStatus::Pending);
}

void TestProtocolSteps::crashBeforeConfirmMarkSold()
{
    FS_STEP_ENGINE(2);
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u"_s, {{kSku, 1, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(engine->book().confirm(u"o1"_s, u"p1"_s)).outcome, Outcome::Paid); // confirm.book alone
    FS_SAFE_THEN_HEALED(*engine); // marked sold by the reconciler
    QVERIFY(FS_OK(engine->gate()->openTokens(kSku)).isEmpty());
    // The provider redelivers: a duplicate, nothing moves.
    QCOMPARE(FS_OK(engine->confirm(u"o1"_s, u"p1"_s)).outcome, Outcome::Duplicate);
    FS_SAFE(*engine);
}

void TestProtocolSteps::crashBeforeReleaseGate()
{
    FS_STEP_ENGINE(1);
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u"_s, {{kSku, 1, {}}})).outcome, Outcome::Reserved);
    QCOMPARE(FS_OK(engine->book().release(u"o1"_s, u"cancel"_s)).outcome, Outcome::Released); // release.book alone
    FS_SAFE_THEN_HEALED(*engine); // the stale hold given back
    // A late payment of the closed order: one refund.
    QCOMPARE(FS_OK(engine->confirm(u"o1"_s, u"late"_s)).outcome, Outcome::RefundRequired);
    QCOMPARE(FS_OK(engine->confirm(u"o1"_s, u"late"_s)).outcome, Outcome::RefundRequired);
    QCOMPARE(FS_OK(engine->book().refundCount(u"o1"_s)), 1);
    FS_SAFE(*engine);
}

void TestProtocolSteps::crashBeforeExpireGate()
{
    FS_STEP_ENGINE(1);
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u"_s, {{kSku, 1, {}}}, 1)).outcome, Outcome::Reserved);
    const qint64 later = FS_OK(engine->database().nowMs()) + 60'000;
    QCOMPARE(FS_OK(engine->book().expire(later)).size(), 1); // expire.book alone
    FS_SAFE(*engine);
    // The next expire run finds the order's gate release due (expire.due) and gives it back.
    QCOMPARE(FS_OK(engine->book().gateReleasesDue()).size(), 1);
    FS_VERIFY_OK(engine->expire(later));
    QVERIFY(FS_OK(engine->book().gateReleasesDue()).isEmpty());
    FS_SAFE_THEN_HEALED(*engine);
    QCOMPARE(FS_OK(engine->reserve(u"o2"_s, u"u"_s, {{kSku, 1, {}}})).outcome, Outcome::Reserved);
    FS_SAFE(*engine);
}

void TestProtocolSteps::crashBeforeReleaseRecord()
{
    FS_STEP_ENGINE(1);
    const QString token = FS_OK(engine->reserve(u"o1"_s, u"u-o1"_s, {{kSku, 1, {}}})).lines.first().token;
    // release.book and the gate's release, then the engine dies before Book::gateReleased:
    // the book still marks the order's gate release as due.
    QCOMPARE(FS_OK(engine->book().release(u"o1"_s, u"cancel"_s)).outcome, Outcome::Released);
    QCOMPARE(FS_OK(engine->gate()->release(kSku, token)), true);
    QCOMPARE(FS_OK(engine->book().gateReleasesDue()).size(), 1);
    FS_SAFE(*engine);
    // The next expire gives it back again (idempotent: no unit twice) and records it.
    FS_VERIFY_OK(engine->expire());
    QVERIFY(FS_OK(engine->book().gateReleasesDue()).isEmpty());
    QCOMPARE(engine->gateLevels(kSku).available, 1);
    FS_SAFE_THEN_HEALED(*engine);
}

void TestProtocolSteps::crashBeforeRestoreLoad()
{
    FS_STEP_ENGINE(1);
    // A rebuild that died after its pause (restore.pause done; or after its load, before
    // restore.unpause): reserves answer paused until the reconciler's pass sets the gate's
    // pause to the book's.
    FS_VERIFY_OK(engine->gate()->setPaused(kSku, true));
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u"_s, {{kSku, 1, {}}})).outcome, Outcome::Paused);
    QVERIFY(reconciledQuiet(*engine));
    // A restore that died after its reads (restore.levels done): the key is still absent,
    // and the next reserve restores it.
    FS_VERIFY_OK(redis.command({"HDEL", GateKeys::key(kSku, "gate"), "available"}));
    FS_SAFE(*engine);
    QCOMPARE(FS_OK(engine->reserve(u"o1"_s, u"u"_s, {{kSku, 1, {}}})).outcome, Outcome::Reserved);
    FS_SAFE_THEN_HEALED(*engine);
}

void TestProtocolSteps::restoreWhileAReserveCompletes_data()
{
    QTest::addColumn<GateRestore::RestoreStep>("at");
    QTest::addColumn<bool>("pays");
    QTest::addRow("settles after the book read") << GateRestore::RestoreStep::BookRead << false;
    QTest::addRow("settles and is paid after the book read") << GateRestore::RestoreStep::BookRead << true;
    QTest::addRow("settles between the token and book reads") << GateRestore::RestoreStep::TokensRead << false;
}

void TestProtocolSteps::restoreWhileAReserveCompletes()
{
    // The model's trail: buyer A is past the gate (its token held, no book row) when the
    // stock key goes; buyer B finds it missing and restores; A commits, settles (and is
    // paid) while B's restore runs. B's restore must not count A's unit twice.
    QFETCH(GateRestore::RestoreStep, at);
    QFETCH(bool, pays);
    FS_STEP_ENGINE(1);
    auto other = test::openEngine(fresh.url(), redis.url());
    QVERIFY(other);
    ReserveAttempt a = pastGate(*engine, u"a"_s);
    QVERIFY(!a.answer);
    FS_VERIFY_OK(redis.command({"HDEL", GateKeys::key(kSku, "gate"), "available"})); // evicted
    bool ran = false;
    other->gateRestore()->setStepSeam([&](GateRestore::RestoreStep step) {
        if (step != at || ran)
            return;
        ran = true;
        auto booked = bookStep(*engine, a);
        engine->applyBook(a, booked); // commit, then settle
        QCOMPARE(FS_OK(booked).outcome, Outcome::Reserved);
        if (pays)
            QCOMPARE(FS_OK(engine->confirm(u"a"_s, u"pa"_s)).outcome, Outcome::Paid);
    });
    auto b = other->reserve(u"b"_s, u"u-b"_s, {{kSku, 1, {}}});
    QVERIFY(ran);
    QCOMPARE(FS_OK(b).outcome, Outcome::OutOfStock);
    QCOMPARE(engine->gateLevels(kSku).available, 0); // before the fix: 1, while the book had 0
    QCOMPARE(FS_OK(engine->book().levels(kSku)).available, 0);
    FS_SAFE_THEN_HEALED(*engine);
}

void TestProtocolSteps::rebuildWhileAReleaseCompletes_data()
{
    QTest::addColumn<bool>("duringRebuild");
    QTest::addRow("rebuild between the release's book and gate steps") << false;
    QTest::addRow("release's book step between the rebuild's reads") << true;
}

void TestProtocolSteps::rebuildWhileAReleaseCompletes()
{
    QFETCH(bool, duringRebuild);
    FS_STEP_ENGINE(1);
    auto reserved = FS_OK(engine->reserve(u"o1"_s, u"u"_s, {{kSku, 1, {}}}));
    QCOMPARE(reserved.outcome, Outcome::Reserved);
    const QString token = reserved.lines.first().token;
    auto releaseBook = [&] {
        QCOMPARE(FS_OK(engine->book().release(u"o1"_s, u"cancel"_s)).outcome, Outcome::Released);
    };
    if (duringRebuild)
        engine->gateRestore()->setStepSeam([&](GateRestore::RestoreStep step) {
            if (step == GateRestore::RestoreStep::TokensRead)
                releaseBook();
        });
    else
        releaseBook();
    FS_VERIFY_OK(engine->rebuildGate(kSku));
    engine->gateRestore()->setStepSeam({});
    FS_SAFE(*engine); // before the fix: the gate said 1 with the token still to give back
    QCOMPARE(FS_OK(engine->gate()->release(kSku, token)), true); // release.gate
    QCOMPARE(engine->gateLevels(kSku).available, 1);
    FS_SAFE_THEN_HEALED(*engine);
}

QTEST_GUILESS_MAIN(TestProtocolSteps)
#include "tst_protocol_steps.moc"
