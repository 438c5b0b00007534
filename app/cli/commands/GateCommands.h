#pragma once

#include "Command.h"

namespace flashstock {

/// `gate rebuild SKU` (reload a SKU's gate from the book), `embedded status` and
/// `embedded stop` (the data dir's private redis-server).
Commands gateCommands();

} // namespace flashstock
