#pragma once

#include "Command.h"

namespace flashstock {

/// `bench [book] [--quick] ...`: the book benchmark on scratch databases (core/bench).
Commands benchCommands();

} // namespace flashstock
