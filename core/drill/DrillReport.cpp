#include "drill/DrillReport.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QJsonObject countsJson(const QMap<QString, qint64> &counts)
{
    QJsonObject o;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        o.insert(it.key(), it.value());
    return o;
}

QString countsText(const QMap<QString, qint64> &counts)
{
    QStringList parts;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        parts << u"%1 %2"_s.arg(it.key()).arg(it.value());
    return parts.isEmpty() ? u"none"_s : parts.join(u", "_s);
}

QString passText(bool ok) { return ok ? u"pass"_s : u"FAIL"_s; }

} // namespace

bool DrillReport::passed() const
{
    if (cancelled || !invariantsHold() || oversold > 0 || stuck > 0 || lostReservations > 0 || lostPayments > 0 || !reconcile.quiet)
        return false;
    for (const FaultTally &t : faults)
        if (t.healed < t.injected)
            return false;
    return true;
}

QJsonObject DrillReport::toJson() const
{
    QJsonObject faultsJson;
    for (auto it = faults.cbegin(); it != faults.cend(); ++it) {
        QJsonObject f{{u"injected"_s, it->injected}, {u"healed"_s, it->healed}, {u"scheduled"_s, it->scheduled}};
        if (!it->unhealed.isEmpty())
            f.insert(u"unhealed"_s, QJsonArray::fromStringList(it->unhealed));
        if (!it->note.isEmpty())
            f.insert(u"note"_s, it->note);
        faultsJson.insert(faultName(it.key()), f);
    }
    QJsonObject invariants;
    for (Invariant i : kInvariants)
        invariants.insert(invariantName(i), holds(i));
    QJsonObject o{
        {u"sku"_s, sku},
        {u"stock"_s, stock},
        {u"buyers"_s, buyers},
        {u"concurrency"_s, concurrency},
        {u"pay_ratio"_s, payRatio},
        {u"hold_seconds"_s, holdSeconds},
        {u"seed"_s, QString::number(seed)},
        {u"schedule_digest"_s, scheduleDigest},
        {u"book_url"_s, book},
        {u"gate_url"_s, gate},
        {u"sold"_s, sold},
        {u"paid_units"_s, paidUnits},
        {u"reserved_units"_s, reservedUnits},
        {u"oversold"_s, oversold},
        {u"stuck"_s, stuck},
        {u"invariants"_s, invariants},
        {u"passed"_s, passed()},
        {u"throughput_per_s"_s, throughputPerS},
        {u"units_per_s"_s, unitsPerS},
        {u"latency_ms"_s, QJsonObject{{u"p50"_s, p50Ms}, {u"p99"_s, p99Ms}}},
        {u"sale_seconds"_s, saleSeconds},
        {u"total_seconds"_s, totalSeconds},
        {u"outcomes"_s, countsJson(reserveOutcomes)},
        {u"payments"_s, countsJson(paymentOutcomes)},
        {u"faults"_s, faultsJson},
        {u"book"_s, QJsonObject{{u"available"_s, bookAvailable}, {u"locked"_s, bookLocked}, {u"sold"_s, sold},
                                {u"total"_s, bookTotal}}},
        {u"gate"_s, gateConfigured ? QJsonValue(QJsonObject{{u"available"_s, gateAvailable}}) : QJsonValue()},
        {u"reconcile"_s, QJsonObject{{u"passes"_s, reconcile.passes},
                                     {u"quiet"_s, reconcile.quiet},
                                     {u"found"_s, countsJson(reconcile.byKind)},
                                     {u"auto_fixed"_s, reconcile.autoFixed},
                                     {u"pending_approval"_s, reconcile.stillPending}}},
        {u"gate_warnings"_s, gateWarnings},
        {u"book_writers"_s, QJsonObject{{u"batches"_s, bookBatches},
                                        {u"orders"_s, bookOrders},
                                        {u"largest_batch"_s, largestBookBatch}}},
    };
    if (!check.ok() || !i5Detail.isEmpty()) {
        QStringList problems = check.problems();
        if (!i5Detail.isEmpty())
            problems << i5Detail;
        o.insert(u"problems"_s, QJsonArray::fromStringList(problems));
    }
    if (!via.isEmpty()) {
        o.insert(u"via"_s, via);
        o.insert(u"lost_reservations"_s, lostReservations);
        o.insert(u"lost_payments"_s, lostPayments);
    }
    if (!notes.isEmpty())
        o.insert(u"notes"_s, QJsonArray::fromStringList(notes));
    if (cancelled)
        o.insert(u"cancelled"_s, true);
    return o;
}

QString DrillReport::toText() const
{
    QString t;
    t += u"FlashStock drill: %1 buyers race for %2 units of %3 (concurrency %4, pay ratio %5, hold %6 s, seed %7, "
         u"schedule %8)\n"_s.arg(buyers).arg(stock).arg(sku).arg(concurrency).arg(payRatio).arg(holdSeconds)
             .arg(seed).arg(scheduleDigest);
    t += u"  book: %1\n  gate: %2\n"_s.arg(book, gate);
    if (!via.isEmpty())
        t += u"  via:  %1 (the buyers and payment callbacks over HTTP)\n"_s.arg(via);
    t += u"\nsale: %1 s, %2 buyers answered/s, %3 units reserved/s; reserve latency p50 %4 ms, p99 %5 ms\n"_s
             .arg(saleSeconds, 0, 'f', 2).arg(throughputPerS, 0, 'f', 0).arg(unitsPerS, 0, 'f', 0)
             .arg(p50Ms, 0, 'f', 2).arg(p99Ms, 0, 'f', 2);
    if (bookBatches > 0)
        t += u"  book writers: %1 orders in %2 transactions (%3 per transaction, the largest %4)\n"_s.arg(bookOrders)
                 .arg(bookBatches)
                 .arg(double(bookOrders) / double(bookBatches), 0, 'f', 1)
                 .arg(largestBookBatch);
    t += u"  reserve answers: %1\n"_s.arg(countsText(reserveOutcomes));
    t += u"  payment answers: %1\n"_s.arg(countsText(paymentOutcomes));
    t += u"\nfaults              injected  healed\n"_s;
    for (auto it = faults.cbegin(); it != faults.cend(); ++it) {
        t += u"  %1 %2 %3"_s.arg(faultName(it.key()), -18).arg(it->injected, 8).arg(it->healed, 7);
        if (!it->note.isEmpty())
            t += u"  (%1)"_s.arg(it->note);
        if (!it->unhealed.isEmpty())
            t += u"  not healed: %1"_s.arg(it->unhealed.join(u", "_s));
        t += u'\n';
    }
    t += u"\nreconcile: %1 pass(es)%2; found %3; waiting for approval %4\n"_s.arg(reconcile.passes)
             .arg(reconcile.quiet ? u", quiet"_s : u", NOT quiet"_s, countsText(reconcile.byKind))
             .arg(reconcile.stillPending);
    t += u"after: book available %1, locked %2, sold %3, total %4; gate available %5\n"_s.arg(bookAvailable)
             .arg(bookLocked).arg(sold).arg(bookTotal)
             .arg(gateConfigured ? QString::number(gateAvailable) : u"n/a (book-only)"_s);
    t += u"sold %1, paid units %2, oversold %3, stuck %4"_s.arg(sold).arg(paidUnits).arg(oversold).arg(stuck);
    if (!via.isEmpty())
        t += u", answered reserved but not in the book %1, answered paid but not paid in the book %2"_s
                 .arg(lostReservations)
                 .arg(lostPayments);
    t += u'\n';
    QStringList verdicts;
    for (Invariant i : kInvariants)
        verdicts << u"%1 %2"_s.arg(invariantName(i), passText(holds(i)));
    t += u"invariants: %1\n"_s.arg(verdicts.join(u", "_s));
    const QStringList problems = check.problems();
    for (const QString &p : problems)
        t += u"  problem: %1\n"_s.arg(p);
    if (!i5Detail.isEmpty())
        t += u"  problem: %1\n"_s.arg(i5Detail);
    for (const QString &n : notes)
        t += u"note: %1\n"_s.arg(n);
    t += cancelled ? u"CANCELLED\n"_s : passed() ? u"PASSED\n"_s : u"FAILED\n"_s;
    return t;
}

} // namespace flashstock
