// Cost of one reconcile pass: a window of 1 000 new ledger rows (500 paid orders) on a book of
// 1 000 000 older rows (500 000 paid orders) vs on a book of 1 000 older rows, both backends.
// Every invariant is checked: over the window and its orders, never a whole table. Run by
// hand (not in ctest):
//   bench_reconcile [--old N] (default 1000000)
// Prints one line per (backend, book size) and the ratio; the issue asks for <= 3x.

#include "Engine.h"
#include "reconcile/Reconciler.h"
#include "store/BookSql.h"
#include "store/Database.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <cstdio>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// Adds `n` paid orders of one unit of A/0, `agoMs` old, as the book would hold them: the
/// order and its line, its RESERVE and CONFIRM rows, and an ADJUST of `n` units that brought
/// the stock they took (so every invariant keeps holding and a pass finds nothing).
bool addPaidOrders(Database &db, const QString &prefix, qint64 n, qint64 agoMs)
{
    const QString at = u"%1 - %2"_s.arg(db.nowMsExpr()).arg(agoMs);
    const QString numbers = u"WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < %1) "_s.arg(n);
    const QString id = u"'%1' || n"_s.arg(prefix);
    const QStringList statements{
        u"INSERT INTO orders (order_id, status, version, created_at, payment_ref, paid_at) %1"
        u"SELECT %2, 'PAID', 2, %3, 'pay-' || %2, %3 FROM s"_s.arg(numbers, id, at),
        u"INSERT INTO order_lines (order_id, sku, bucket, qty) %1SELECT %2, 'A', 0, 1 FROM s"_s.arg(numbers, id),
        sql::insertLedgerHead()
            + u"SELECT 'adj:%1', 'ADJUST', 'A', 0, NULL, %2, 0, 0, 10, 0, 0, 10 + %2, 0, 0, %3, 'bench', 'bench'"_s.arg(
                prefix).arg(n).arg(at),
        sql::insertLedgerHead() + numbers
            + u"SELECT %1, 'RESERVE', 'A', 0, NULL, -1, 1, 0, 11, 0, 0, 10, 1, 0, %2, 'bench', 'bench' FROM s"_s.arg(id, at),
        sql::insertLedgerHead() + numbers
            + u"SELECT %1, 'CONFIRM', 'A', 0, NULL, 0, -1, 1, 10, 1, 0, 10, 0, 1, %2, 'bench', 'bench' FROM s"_s.arg(id, at),
        u"UPDATE buckets SET sold = sold + %1, total = total + %1 WHERE sku = 'A' AND bucket = 0"_s.arg(n)};
    auto done = db.write<bool>([&](Transaction &) -> Result<bool> {
        for (const QString &statement : statements)
            if (auto r = db.exec(statement); !r)
                return std::unexpected(r.error());
        return true;
    });
    if (!done)
        std::fprintf(stderr, "insert failed: %s\n", qPrintable(done.error().message));
    return done.has_value();
}

/// Milliseconds of one pass over `window` new rows on a book of `old` older rows (best of 3).
double measure(const QString &backend, qint64 old, qint64 window)
{
    test::FreshBook fresh(backend);
    if (!fresh.problem().isEmpty()) {
        std::fprintf(stderr, "%s: %s\n", qPrintable(backend), qPrintable(fresh.problem()));
        return -1;
    }
    auto engine = test::openEngine(fresh.url());
    if (!engine || !engine->addSku(u"A"_s, 10) || !addPaidOrders(engine->database(), u"old-"_s, old / 2, 60000))
        return -1;
    // A live book of that size has planner statistics (autovacuum); a fresh bulk load not yet.
    if (!engine->database().analyze())
        return -1;
    Reconciler rec(*engine);
    rec.setWatermarkLagMs(30000);
    if (!rec.runPass(0)) // folds the older rows into the checkpoints (not timed)
        return -1;
    double best = 1e18;
    for (int round = 0; round < 3; ++round) {
        if (!addPaidOrders(engine->database(), u"new%1-"_s.arg(round), window / 2, 0))
            return -1;
        QElapsedTimer t;
        t.start();
        auto report = rec.runPass(0);
        const double ms = double(t.nsecsElapsed()) / 1e6;
        if (!report || !report->discrepancies.isEmpty()) {
            std::fprintf(stderr, "pass failed or found something: %s\n",
                         qPrintable(report ? report->discrepancies.first().detail : report.error().message));
            return -1;
        }
        best = std::min(best, ms);
    }
    return best;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    qint64 old = 1000000;
    const QStringList args = app.arguments();
    if (const qsizetype i = args.indexOf(u"--old"_s); i >= 0 && i + 1 < args.size())
        old = args.at(i + 1).toLongLong();
    for (const QString &backend : test::bookBackends()) {
        const double small = measure(backend, 1000, 1000);
        const double big = measure(backend, old, 1000);
        std::printf("%-10s window 1000 rows: book of 1000 older rows %.2f ms, book of %lld older rows %.2f ms, "
                    "ratio %.2f\n",
                    qPrintable(backend), small, qlonglong(old), big, small > 0 ? big / small : -1.0);
    }
    return 0;
}
