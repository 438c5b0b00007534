#pragma once

#include "Domain.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

namespace flashstock {

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
/// Ledger rows as an aligned text table for people.
QString ledgerTable(const QList<LedgerRow> &rows);
/// The tokens of lines that have one.
QJsonArray tokensJson(const QList<OrderLine> &lines);
/// `A:1,B:3`.
QString linesText(const QList<OrderLine> &lines);

} // namespace flashstock
