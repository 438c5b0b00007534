#pragma once

#include "ContractJson.h"
#include "Domain.h"

#include <QString>

namespace flashstock {

// Text for people; the JSON shapes live in core (ContractJson.h), shared with the server.

/// Ledger rows as an aligned text table for people.
QString ledgerTable(const QList<LedgerRow> &rows);
/// `A:1,B:3`.
QString linesText(const QList<OrderLine> &lines);

} // namespace flashstock
