#pragma once

#include "Command.h"

namespace flashstock {

/// `token add NAME --scope S,...` (a new server bearer token; its secret is printed once),
/// `token list` (never a secret), `token revoke NAME`.
Commands tokenCommands();

} // namespace flashstock
