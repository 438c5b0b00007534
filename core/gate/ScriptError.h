#pragma once

#include "Result.h"
#include "gate/Gate.h"

#include <QString>

#include <optional>

namespace flashstock {

/// The negative return codes of the scripts in lua/: the one place where their numbers
/// get names. Every script's header lists which of them it returns; a negative code means
/// the script changed nothing.
enum class ScriptError : int {
    OutOfStock = -1,    ///< reserve: gate available < qty
    LimitExceeded = -2, ///< reserve: over the sale's per-user limit
    SaleClosed = -3,    ///< reserve: sale defined and not open at Redis TIME
    Paused = -4,        ///< reserve: SKU paused
    NoStockKey = -5,    ///< reserve: the stock key is missing
    UnknownToken = -6,  ///< settle/mark-sold/release: no such token
    UserRequired = -7,  ///< reserve: the sale has a per-user limit and no user was given
    BadArgument = -8,   ///< an ARGV entry is malformed
    Corrupt = -9,       ///< a stored value is not what the scripts write
    WrongState = -10,   ///< settle/mark-sold of a released token
};

/// The non-negative answers of the scripts in lua/ that the C++ side reads, named as each
/// script's header names them (a header lists every code; these are the one place where
/// their numbers get names, beside ScriptError).
enum class ReserveAnswer : int {
    Reserved = 1, ///< reserve-2.lua RESERVED: a new token, units deducted
    Existing = 2, ///< reserve-2.lua EXISTING: the order's token on this SKU, nothing deducted
};
enum class ReleaseAnswer : int {
    Unchanged = 0,     ///< release-3.lua UNCHANGED: released or sold before
    Released = 1,      ///< release-3.lua RELEASED: units given back to the stock key
    ReleasedNoKey = 2, ///< release-3.lua RELEASED_NO_KEY: released, the stock key is missing
};
enum class AdjustAnswer : int {
    NoStockKey = 0, ///< adjust-1.lua NO_STOCK_KEY: nothing done
    Adjusted = 1,   ///< adjust-1.lua ADJUSTED
};

/// Stable lower-case name of a script return code (`out_of_stock`, `unknown_token`, ...);
/// `code_N` for a number no script returns.
QString scriptErrorName(int code);

/// The reserve outcome for a business refusal (-1..-5), std::nullopt for other codes.
std::optional<GateCode> gateCodeForScriptError(int code);

/// A failed Result for a script's negative code: UnknownToken, UserRequired, BadArgument
/// are InvalidArgument; WrongState is Conflict; anything else is Internal. `script` and
/// `subject` (SKU, token) go into the message.
std::unexpected<Error> scriptFailure(int code, const QString &script, const QString &subject);

} // namespace flashstock
