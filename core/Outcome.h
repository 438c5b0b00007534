#pragma once

#include <QString>

#include <optional>

namespace flashstock {

/// Business outcome of a stock operation. Each has one word shared by the core, the CLI
/// (text and JSON), the console and the logs. An outcome is an answer, not an error: an
/// out-of-stock reserve succeeded in telling the buyer no.
enum class Outcome {
    Reserved,        ///< reserve: units held for the order (also for the same order and lines again)
    Duplicate,       ///< reserve: order exists with other lines; confirm: the same payment again
    OutOfStock,      ///< reserve: not enough available units
    LimitExceeded,   ///< reserve: over the sale's per-user limit
    SaleClosed,      ///< reserve: a sale is defined for the SKU and is not open now
    Paused,          ///< reserve: a discrepancy holds the SKU
    GateUnavailable, ///< reserve: the gate is unreachable and the sale is not book-only
    Paid,            ///< confirm: PENDING -> PAID
    RefundRequired,  ///< confirm: the order was already closed; a refund record was written
    Released,        ///< release: PENDING -> CLOSED
    AlreadyClosed,   ///< release: the order was closed before
    AlreadyPaid,     ///< release: the order was paid before
};

/// The outcome's word, e.g. `out_of_stock`.
QString outcomeWord(Outcome outcome);
/// The outcome of a word (`out_of_stock` -> OutOfStock), as outcomeWord() spells it; nullopt
/// for any other text (clients of the server's API parse its answers with it).
std::optional<Outcome> outcomeFromWord(const QString &word);

} // namespace flashstock
