#include "Domain.h"

#include "Identifiers.h"

namespace flashstock {

QString orderStatusName(OrderStatus status)
{
    switch (status) {
    case OrderStatus::Pending: return QStringLiteral("PENDING");
    case OrderStatus::Paid: return QStringLiteral("PAID");
    case OrderStatus::Closed: return QStringLiteral("CLOSED");
    case OrderStatus::Abandoned: return QStringLiteral("ABANDONED");
    }
    return {};
}

std::optional<OrderStatus> orderStatusFromName(const QString &name)
{
    for (OrderStatus s : {OrderStatus::Pending, OrderStatus::Paid, OrderStatus::Closed, OrderStatus::Abandoned})
        if (orderStatusName(s) == name)
            return s;
    return std::nullopt;
}

QString levelsText(const Levels3 &l)
{
    return QStringLiteral("%1/%2/%3").arg(l.available).arg(l.locked).arg(l.sold);
}

} // namespace flashstock

namespace flashstock {

QString saleStatusName(SaleStatus status)
{
    switch (status) {
    case SaleStatus::Scheduled: return QStringLiteral("scheduled");
    case SaleStatus::Open: return QStringLiteral("open");
    case SaleStatus::Paused: return QStringLiteral("paused");
    case SaleStatus::Stopped: return QStringLiteral("stopped");
    }
    return {};
}

QString adjustmentText(const LedgerRow &row)
{
    if (row.adjustmentKind.isEmpty())
        return {};
    QString text = QStringLiteral("%1 %2%3")
                       .arg(row.adjustmentKind, row.adjustmentUnits > 0 ? QStringLiteral("+") : QString())
                       .arg(row.adjustmentUnits);
    if (row.discrepancy > 0)
        text += QStringLiteral(" (discrepancy #%1)").arg(row.discrepancy);
    if (!row.reason.isEmpty())
        text += QStringLiteral(": ") + printable(row.reason);
    return text;
}

} // namespace flashstock
