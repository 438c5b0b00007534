#include "Result.h"
#include "Outcome.h"

namespace flashstock {

QString errorCodeName(ErrorCode code)
{
    switch (code) {
    case ErrorCode::InvalidArgument: return QStringLiteral("invalid_argument");
    case ErrorCode::NotFound: return QStringLiteral("not_found");
    case ErrorCode::NotPermitted: return QStringLiteral("not_permitted");
    case ErrorCode::Unavailable: return QStringLiteral("unavailable");
    case ErrorCode::Conflict: return QStringLiteral("conflict");
    case ErrorCode::Internal: return QStringLiteral("internal");
    case ErrorCode::OutcomeUnknown: return QStringLiteral("outcome_unknown");
    }
    return QStringLiteral("internal");
}

QString outcomeWord(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Reserved: return QStringLiteral("reserved");
    case Outcome::Duplicate: return QStringLiteral("duplicate");
    case Outcome::OutOfStock: return QStringLiteral("out_of_stock");
    case Outcome::LimitExceeded: return QStringLiteral("limit_exceeded");
    case Outcome::SaleClosed: return QStringLiteral("sale_closed");
    case Outcome::Paused: return QStringLiteral("paused");
    case Outcome::GateUnavailable: return QStringLiteral("gate_unavailable");
    case Outcome::Paid: return QStringLiteral("paid");
    case Outcome::RefundRequired: return QStringLiteral("refund_required");
    case Outcome::Released: return QStringLiteral("released");
    case Outcome::AlreadyClosed: return QStringLiteral("already_closed");
    case Outcome::AlreadyPaid: return QStringLiteral("already_paid");
    }
    return {};
}

std::optional<Outcome> outcomeFromWord(const QString &word)
{
    for (int i = int(Outcome::Reserved); i <= int(Outcome::AlreadyPaid); ++i)
        if (outcomeWord(Outcome(i)) == word)
            return Outcome(i);
    return std::nullopt;
}

} // namespace flashstock
