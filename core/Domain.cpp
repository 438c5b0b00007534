#include "Domain.h"

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

} // namespace flashstock
