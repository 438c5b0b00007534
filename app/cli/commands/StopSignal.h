#pragma once

#include <QtGlobal>

namespace flashstock {

/// SIGINT/SIGTERM for the CLI's `--every` loops: the handler only sets a flag; the loop checks
/// it between passes and while it waits, and stops cleanly. Main thread only.
class StopSignal {
public:
    /// Installs the handlers (idempotent) and clears the flag.
    static void install();
    /// True once SIGINT or SIGTERM arrived.
    static bool requested();
    /// Waits up to `ms` milliseconds, running the Qt event loop (so network replies make
    /// progress), and returns early when a stop was requested. Returns !requested().
    static bool wait(qint64 ms);
};

} // namespace flashstock
