#pragma once

#include "Command.h"

namespace flashstock {

/// `ledger --sku S | --order O [--limit N]`: the trace of a SKU or an order.
Commands ledgerCommands();

} // namespace flashstock
