#pragma once

#include "Command.h"

namespace flashstock {

/// `gate rebuild (SKU | --all)` (reload the gate from the book), `gate script-keys`,
/// `embedded status`, `embedded stop` and `embedded start` (the data dir's private redis-server).
Commands gateCommands();

} // namespace flashstock
