#include "Discrepancy.h"

#include <QList>

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

QList<InvariantBreach> Discrepancy::breaches() const
{
    QList<InvariantBreach> out;
    for (Invariant i : kInvariants)
        if (breaks.testFlag(i))
            out << InvariantBreach::at(i, sku, bucket, order);
    return out;
}

} // namespace flashstock
