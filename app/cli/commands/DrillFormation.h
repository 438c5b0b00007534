#pragma once

#include "Result.h"
#include "drill/DrillChannel.h"

#include <QString>

namespace flashstock {

/// Reads the formation of `file` (`drill --formation FILE`) into `via`: the JSON object
/// `scripts/ha-lab.sh status --json` prints, whose `faults` gives, for book-failover,
/// standby-loss and server-kill, the command that acts it out, and `heal` the command that
/// makes the formation whole again (each an array: the program and its arguments, run
/// without a shell). Sets via.formationFault (heal, then the fault's command, whose last line
/// of output is a JSON object with `killed_at_ms`) and via.healFormation. Each command must
/// exit 0 in time (heal 240 s, a fault 60 s), else the fault is an error the drill reports.
/// Errors: InvalidArgument naming `formation` for a file that cannot be read, is not such
/// an object or lacks one of the commands.
[[nodiscard]] Result<void> useFormation(DrillVia &via, const QString &file);

} // namespace flashstock
