#pragma once

#include "Command.h"

namespace flashstock {

/// `drill ...`: the rehearsal (core/drill) on the command's book and gate.
Commands drillCommands();

} // namespace flashstock
