#pragma once

#include <QString>

#include <expected>

namespace flashstock {

/// What went wrong, in words that tell the caller whether retrying can help.
enum class ErrorCode {
    InvalidArgument, ///< bad input: a field out of range, an unknown SKU or order. Never retry.
    NotFound,        ///< the order named does not exist (yet): a payment callback may retry it later.
    NotPermitted,    ///< the operator may not do this (not an approver). Never retry.
    Unavailable,     ///< a server is unreachable or timed out. Retrying later can help.
    Conflict,        ///< a transaction lost a race (busy, serialization, deadlock) after all retries.
    Internal,        ///< the book or gate is not in the state it must be in; needs a person.
    /// The connection was lost after COMMIT was sent: nobody knows whether the transaction
    /// committed. Never a success or a failure; the book's batch path finds out by replaying.
    OutcomeUnknown,
};

/// An error: a code, a message for people, and the input field at fault (empty if none).
struct Error {
    ErrorCode code = ErrorCode::Internal;
    QString message;
    QString field;
};

/// The result of every fallible core call: a value or an Error. The core throws no exceptions.
template <typename T>
using Result = std::expected<T, Error>;

/// Shorthand for a failed Result: `return fail(ErrorCode::InvalidArgument, msg, u"qty"_s);`
inline std::unexpected<Error> fail(ErrorCode code, QString message, QString field = {})
{
    return std::unexpected<Error>(Error{code, std::move(message), std::move(field)});
}

/// Stable lower-case name of an error code, as used in JSON (`error.code`) and logs.
QString errorCodeName(ErrorCode code);

} // namespace flashstock
