#pragma once

#include "Command.h"

namespace flashstock {

/// `approver list`, `approver add NAME`, `approver remove NAME`, `approver policy
/// [--four-eyes-units N]`: the book's approver policy (DESIGN.md, "Who may decide").
Commands approverCommands();

} // namespace flashstock
