#include "drill/DrillSchedule.h"

#include <QCryptographicHash>

#include <algorithm>
#include <random>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// A double in [0, 1) from 53 bits of the generator: the same on every platform, unlike
/// std::uniform_real_distribution, whose algorithm the standard leaves open.
double unit(std::mt19937_64 &rng)
{
    return double(rng() >> 11) * 0x1.0p-53;
}

bool buyerMustPay(FaultKind kind)
{
    return kind == FaultKind::LostCallback || kind == FaultKind::DuplicateCallback;
}

void assign(BuyerPlan &plan, FaultKind kind)
{
    plan.fault = kind;
    if (buyerMustPay(kind))
        plan.pays = true;
    if (kind == FaultKind::LatePayment)
        plan.pays = false; // pays only after the hold closed
}

} // namespace

DrillSchedule DrillSchedule::build(const DrillOptions &options)
{
    DrillSchedule s;
    std::mt19937_64 rng(options.seed);
    QList<QPair<FaultKind, double>> kinds;
    for (FaultKind k : allFaultKinds()) {
        if (options.faults.rates.contains(k) && options.leftOutReason(k).isEmpty())
            kinds << qMakePair(k, options.faults.rates.value(k));
    }
    s.buyers.resize(size_t(options.buyers));
    for (qint64 i = 0; i < options.buyers; ++i) {
        BuyerPlan &plan = s.buyers[size_t(i)];
        plan.pays = unit(rng) < options.payRatio;
        const int copies = 2 + int(rng() % 2); // drawn for every buyer: keeps the stream aligned
        for (const auto &[kind, rate] : std::as_const(kinds)) {
            if (!(unit(rng) < rate))
                continue;
            if (isGlobalFault(kind)) {
                s.events.push_back({i, kind});
                ++s.scheduled[kind];
            } else if (!plan.fault) {
                assign(plan, kind);
                ++s.scheduled[kind];
            }
        }
        if (plan.fault == FaultKind::DuplicateCallback)
            plan.copies = copies;
    }
    if (options.faults.forceEach || !options.faults.once.isEmpty()) {
        // Early buyers still find stock, so a fault placed there really fires.
        const qint64 window = std::max<qint64>(1, std::min(options.buyers, std::max<qint64>(1, options.stock / 2)));
        for (const auto &[kind, rate] : std::as_const(kinds)) {
            Q_UNUSED(rate);
            if (!options.faults.mustFire(kind))
                continue;
            if (isGlobalFault(kind) && s.scheduled.value(kind) > 0)
                continue;
            bool early = false; // a per-buyer fault on a late buyer may meet no stock and not fire
            for (qint64 i = 0; i < window && !early; ++i)
                early = s.buyers[size_t(i)].fault == kind;
            if (early)
                continue;
            if (isGlobalFault(kind)) {
                const qint64 lo = options.buyers / 10;
                const qint64 span = std::max<qint64>(1, options.buyers / 2 - lo);
                s.events.push_back({std::min(options.buyers - 1, lo + qint64(rng() % quint64(span))), kind});
                ++s.scheduled[kind];
                continue;
            }
            const qint64 start = qint64(rng() % quint64(window));
            for (qint64 step = 0; step < options.buyers; ++step) {
                BuyerPlan &plan = s.buyers[size_t((start + step) % options.buyers)];
                if (plan.fault)
                    continue;
                assign(plan, kind);
                if (kind == FaultKind::DuplicateCallback)
                    plan.copies = 2 + int(rng() % 2);
                ++s.scheduled[kind];
                break;
            }
        }
        std::stable_sort(s.events.begin(), s.events.end(),
                         [](const GlobalEvent &a, const GlobalEvent &b) { return a.beforeBuyer < b.beforeBuyer; });
    }
    return s;
}

QString DrillSchedule::digest() const
{
    QCryptographicHash hash(QCryptographicHash::Sha1);
    for (const BuyerPlan &p : buyers) {
        const char bytes[3] = {char(p.pays), char(p.fault ? int(*p.fault) + 1 : 0), char(p.copies)};
        hash.addData(QByteArrayView(bytes, 3));
    }
    for (const GlobalEvent &e : events)
        hash.addData(QByteArray::number(e.beforeBuyer) + ':' + QByteArray::number(int(e.kind)) + ';');
    return QString::fromLatin1(hash.result().toHex().left(16));
}

} // namespace flashstock
