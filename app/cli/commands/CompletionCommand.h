#pragma once

#include "Command.h"

namespace flashstock {

class Cli;

/// `completion bash`: prints a bash completion script generated from `cli`'s command table
/// (which must outlive the command; the Cli owns both).
std::unique_ptr<Command> completionCommand(const Cli &cli);

} // namespace flashstock
