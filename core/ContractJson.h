#pragma once

#include "Domain.h"
#include "Result.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

namespace flashstock {

struct GateSide;

// The JSON shapes of the contract (DESIGN.md, "JSON shapes that scripts parse"), built in one
// place for every face that prints them: the CLI's --json and the server's API. Plain
// functions of their arguments; any thread.

/// ms since the epoch as ISO 8601 UTC with milliseconds (`2026-11-30T14:46:23.120Z`).
QString isoTime(qint64 ms);
/// `{"available", "locked", "sold", "total"}` of a SKU, book side.
QJsonObject levelsJson(const SkuLevels &levels);
/// `[{"bucket", "available", "locked", "sold", "total"}]`.
QJsonArray bucketsJson(const SkuLevels &levels);
/// One ledger row as in DESIGN.md (`order`, `operation`, `sku`, `bucket`, `delta_*`, `token`,
/// `operator`, `at`), plus `id`, `source`, the levels after and, for an ADJUST row,
/// `adjustment`: {kind, units, reason, discrepancy}.
QJsonObject ledgerRowJson(const LedgerRow &row);
/// The tokens of lines that have one.
QJsonArray tokensJson(const QList<OrderLine> &lines);
/// `{"error": {"code", "message", "field"}}` (`field` null when the error names none).
QJsonObject errorJson(const Error &error);
/// A reserve's answer: `{"result", "order", "tokens"}`, with `expires_at` when reserved and
/// `sku` (the first SKU that could not be served) when refused for one. An answer without
/// tokens or `expires_at` depends on its outcome, order and `sku` only (ReserveJsonWriter
/// relies on that).
QJsonObject reserveJson(const ReserveResult &result);

/// Writes reserveJson(result) as QJsonDocument writes it (compact), byte for byte, for a face
/// that answers many reserves (the server: one per request thread). A refusal without tokens
/// (the crowd's out_of_stock) differs from the last one of its outcome and `sku` only in its
/// order id, which JSON writes as it is (checkOrderId's characters need no escaping): its
/// text is that one's with the order put in, instead of a QJsonObject and a QJsonDocument
/// made again (docs/benchmarks.md says what that costs). Every other answer is made by
/// reserveJson and remembered as the next refusals' text when it is such a refusal.
/// Not thread-safe: one per thread.
class ReserveJsonWriter {
public:
    /// The compact JSON text of reserveJson(result).
    QByteArray write(const ReserveResult &result);

private:
    bool m_have = false;
    Outcome m_outcome = Outcome::OutOfStock;
    QString m_sku;
    QByteArray m_head; ///< the text before the order id's characters
    QByteArray m_tail; ///< the text after them
};
/// A confirm's or release's answer: `{"result", "order"}`.
QJsonObject orderChangeJson(const OrderChange &change);
/// `sku show --json` and `GET /v1/skus/{sku}`: `{"sku", "book": {...}, "gate": {"available",
/// "tokens_issued", "refusals"} or null, "buckets": [...]}`, with `gate_error` when the gate
/// is configured and unreachable (`gate.counters_error` when only its counters are).
QJsonObject skuJson(const SkuLevels &levels, const GateSide &gate);
/// `GET /v1/orders/{order}`: `{"order", "status", "user", "lines": [{"sku", "qty", "token"}],
/// "created_at", "expires_at", "payment", "closed_reason"}` (absent values null).
QJsonObject orderJson(const OrderView &order);

} // namespace flashstock
