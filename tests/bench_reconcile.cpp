// Cost of one reconcile pass: a window of 1 000 new ledger rows on a book of 1 000 000 older
// rows vs on a book of 1 000 older rows, both backends. Run by hand (not in ctest):
//   bench_reconcile [--old N] (default 1000000)
// Prints one line per (backend, book size) and the ratio; the issue asks for <= 3x.

#include "Engine.h"
#include "reconcile/Reconciler.h"
#include "store/Database.h"
#include "support/BookFixture.h"
#include "support/EngineHelpers.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <cstdio>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

/// Appends `n` zero-delta ledger rows on A/0 (so the invariants keep holding), `agoMs` old.
bool addRows(Database &db, const QString &prefix, qint64 n, qint64 agoMs)
{
    auto r = db.exec(u"INSERT INTO ledger (order_id, operation, sku, bucket, token, delta_available, delta_locked, "
                     u"delta_sold, available_before, locked_before, sold_before, available_after, locked_after, "
                     u"sold_after, at, operator, source) "
                     u"WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?) "
                     u"SELECT ? || n, 'ADJUST', 'A', 0, NULL, 0, 0, 0, 10, 0, 0, 10, 0, 0, %1 - ?, 'bench', 'bench' "
                     u"FROM s"_s.arg(db.nowMsExpr()),
                     {n, prefix, agoMs});
    if (!r)
        std::fprintf(stderr, "insert failed: %s\n", qPrintable(r.error().message));
    return r.has_value();
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
    if (!engine || !engine->addSku(u"A"_s, 10) || !addRows(engine->database(), u"old:"_s, old, 60000))
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
        if (!addRows(engine->database(), u"new%1:"_s.arg(round), window, 0))
            return -1;
        QElapsedTimer t;
        t.start();
        auto report = rec.runPass(0);
        const double ms = double(t.nsecsElapsed()) / 1e6;
        if (!report || !report->discrepancies.isEmpty()) {
            std::fprintf(stderr, "pass failed or found something\n");
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
