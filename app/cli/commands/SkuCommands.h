#pragma once

#include "Command.h"

namespace flashstock {

/// `sku add`, `sku show`, `sku list`, `sku restock`, `sku rebalance`, `sku buckets`: create a SKU,
/// inspect it (book and gate side by side) and change its stock (ledgered; the gate kept
/// in step).
Commands skuCommands();

} // namespace flashstock
