#include "gate/ScriptError.h"

using namespace Qt::StringLiterals;

namespace flashstock {

QString scriptErrorName(int code)
{
    switch (static_cast<ScriptError>(code)) {
    case ScriptError::OutOfStock: return u"out_of_stock"_s;
    case ScriptError::LimitExceeded: return u"limit_exceeded"_s;
    case ScriptError::SaleClosed: return u"sale_closed"_s;
    case ScriptError::Paused: return u"paused"_s;
    case ScriptError::NoStockKey: return u"no_stock_key"_s;
    case ScriptError::UnknownToken: return u"unknown_token"_s;
    case ScriptError::UserRequired: return u"user_required"_s;
    case ScriptError::BadArgument: return u"bad_argument"_s;
    case ScriptError::Corrupt: return u"corrupt"_s;
    case ScriptError::WrongState: return u"wrong_state"_s;
    }
    return u"code_%1"_s.arg(code);
}

std::optional<GateCode> gateCodeForScriptError(int code)
{
    switch (static_cast<ScriptError>(code)) {
    case ScriptError::OutOfStock: return GateCode::OutOfStock;
    case ScriptError::LimitExceeded: return GateCode::LimitExceeded;
    case ScriptError::SaleClosed: return GateCode::SaleClosed;
    case ScriptError::Paused: return GateCode::Paused;
    case ScriptError::NoStockKey: return GateCode::NoStockKey;
    default: return std::nullopt;
    }
}

std::unexpected<Error> scriptFailure(int code, const QString &script, const QString &subject)
{
    const QString msg = u"gate script %1 answered %2 (%3) for %4"_s.arg(
        script, scriptErrorName(code), QString::number(code), subject);
    switch (static_cast<ScriptError>(code)) {
    case ScriptError::UnknownToken: return fail(ErrorCode::InvalidArgument, msg, u"token"_s);
    case ScriptError::UserRequired:
        return fail(ErrorCode::InvalidArgument,
                    u"a user is required: the sale of %1 has a per-user limit"_s.arg(subject),
                    u"user"_s);
    case ScriptError::BadArgument: return fail(ErrorCode::InvalidArgument, msg);
    case ScriptError::WrongState: return fail(ErrorCode::Conflict, msg, u"token"_s);
    default: return fail(ErrorCode::Internal, msg);
    }
}

} // namespace flashstock
