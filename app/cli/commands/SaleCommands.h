#pragma once

#include "Command.h"

namespace flashstock {

/// `sale create`, `sale start`, `sale pause`, `sale stop`, `sale book-only`, `sale list`:
/// flash sales in book and gate.
Commands saleCommands();

} // namespace flashstock
