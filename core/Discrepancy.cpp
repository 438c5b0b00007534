#include "Discrepancy.h"

#include <QList>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

template <typename E>
struct Named {
    E value;
    const char16_t *name;
};

constexpr Named<DiscrepancyKind> kKinds[] = {
    {DiscrepancyKind::OrphanPreDeduct, u"orphan_pre_deduct"},
    {DiscrepancyKind::StaleHold, u"stale_hold"},
    {DiscrepancyKind::GateShortfall, u"gate_shortfall"},
    {DiscrepancyKind::GateExcess, u"gate_excess"},
    {DiscrepancyKind::BrokenBucket, u"broken_bucket"},
    {DiscrepancyKind::LedgerMismatch, u"ledger_mismatch"},
    {DiscrepancyKind::OrderLedgerMismatch, u"order_ledger_mismatch"},
    {DiscrepancyKind::StrayRefund, u"stray_refund"},
    {DiscrepancyKind::UnrefundedPayment, u"unrefunded_payment"},
};

constexpr Named<DiscrepancyStatus> kStatuses[] = {
    {DiscrepancyStatus::AutoFixed, u"auto_fixed"},
    {DiscrepancyStatus::PendingApproval, u"pending_approval"},
    {DiscrepancyStatus::Approved, u"approved"},
    {DiscrepancyStatus::Rejected, u"rejected"},
};

constexpr Named<DiscrepancyFigure> kFigures[] = {
    {DiscrepancyFigure::Available, u"available"},
    {DiscrepancyFigure::Locked, u"locked"},
    {DiscrepancyFigure::Sold, u"sold"},
    {DiscrepancyFigure::OrderLocked, u"order_locked"},
    {DiscrepancyFigure::LedgerRows, u"ledger_rows"},
    {DiscrepancyFigure::RefundRecords, u"refund_records"},
};

template <typename E, size_t N>
QString nameIn(const Named<E> (&table)[N], E value)
{
    for (const Named<E> &n : table)
        if (n.value == value)
            return QString::fromUtf16(n.name);
    return {};
}

template <typename E, size_t N>
std::optional<E> valueIn(const Named<E> (&table)[N], const QString &name)
{
    for (const Named<E> &n : table)
        if (name == QString::fromUtf16(n.name))
            return n.value;
    return std::nullopt;
}

} // namespace

QString discrepancyKindName(DiscrepancyKind kind)
{
    return nameIn(kKinds, kind);
}

std::optional<DiscrepancyKind> discrepancyKindFromName(const QString &name)
{
    return valueIn(kKinds, name);
}

QString discrepancyStatusName(DiscrepancyStatus status)
{
    return nameIn(kStatuses, status);
}

std::optional<DiscrepancyStatus> discrepancyStatusFromName(const QString &name)
{
    return valueIn(kStatuses, name);
}

QString discrepancyFigureName(DiscrepancyFigure figure)
{
    return nameIn(kFigures, figure);
}

DiscrepancyFigure discrepancyFigureFromName(const QString &name)
{
    return valueIn(kFigures, name).value_or(DiscrepancyFigure::None);
}

QString bucketProposal(const QString &sku, int bucket, const Correction &correction)
{
    if (const auto *r = std::get_if<RestoreBucket>(&correction)) {
        // The figure named: available, unless only locked or sold differ.
        const char16_t *figure = u"available";
        qint64 delta = r->ledger.available - r->found.available;
        if (delta == 0 && r->ledger.locked != r->found.locked) {
            figure = u"locked";
            delta = r->ledger.locked - r->found.locked;
        } else if (delta == 0 && r->ledger.sold != r->found.sold) {
            figure = u"sold";
            delta = r->ledger.sold - r->found.sold;
        }
        return u"restore %1 bucket %2 to what its ledger explains: %3 (%4 %5%6)"_s.arg(sku)
            .arg(bucket)
            .arg(levelsText(r->ledger))
            .arg(QString::fromUtf16(figure), delta >= 0 ? u"+"_s : QString())
            .arg(delta);
    }
    if (const auto *t = std::get_if<AcceptStocktake>(&correction))
        return u"accept the counted %1 bucket %2 of %3 as a stocktake adjustment"_s.arg(sku).arg(bucket).arg(
            levelsText(t->found));
    return {};
}

QString correctionWord(const Correction &correction)
{
    struct Word {
        QString operator()(std::monostate) const { return {}; }
        QString operator()(const RestoreBucket &) const { return u"restore"_s; }
        QString operator()(const AcceptStocktake &) const { return u"stocktake"_s; }
        QString operator()(const ChangeOrderStatus &) const { return u"order_status"_s; }
        QString operator()(const RecordRefund &) const { return u"refund"_s; }
    };
    return std::visit(Word{}, correction);
}

QString correctionText(const Correction &correction)
{
    if (const auto *c = std::get_if<ChangeOrderStatus>(&correction))
        return u"order_status:%1->%2"_s.arg(orderStatusName(c->from), orderStatusName(c->to));
    if (const auto *r = std::get_if<RecordRefund>(&correction))
        return u"refund:"_s + r->payment;
    return correctionWord(correction);
}

bool Discrepancy::awaitsSecondApprover() const
{
    return status == DiscrepancyStatus::PendingApproval && !decisions.isEmpty()
        && decisions.constLast().decision == Decision::Approve && !decisions.constLast().applied;
}

qint64 correctionUnits(const Discrepancy &d)
{
    auto largest = [](const Levels3 &a, const Levels3 &b) {
        return std::max({qAbs(a.available - b.available), qAbs(a.locked - b.locked), qAbs(a.sold - b.sold)});
    };
    if (const auto *r = std::get_if<RestoreBucket>(&d.correction))
        return largest(r->found, r->ledger);
    if (const auto *s = std::get_if<AcceptStocktake>(&d.correction))
        return largest(s->found, s->ledger);
    return qAbs(d.delta);
}

QList<InvariantBreach> Discrepancy::breaches() const
{
    QList<InvariantBreach> out;
    for (Invariant i : kInvariants)
        if (breaks.testFlag(i))
            out << InvariantBreach::at(i, sku, bucket, order);
    return out;
}

} // namespace flashstock
