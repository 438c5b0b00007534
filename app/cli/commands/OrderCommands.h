#pragma once

#include "Command.h"

namespace flashstock {

/// `reserve`, `confirm`, `release`, `expire [--every SECONDS]`: the order flows (DESIGN.md).
Commands orderCommands();

} // namespace flashstock
