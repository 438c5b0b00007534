#pragma once

#include "Command.h"

namespace flashstock {

/// `backup FILE [--overwrite]`: an online, checked backup of the book of record.
Commands backupCommands();

} // namespace flashstock
