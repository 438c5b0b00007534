#pragma once

#include <QtGlobal>

namespace flashstock {

/// SIGINT/SIGTERM for the CLI's `--every` loops and the drill: the first signal only sets a
/// flag, which the loop checks between passes (the drill: every tick) and while it waits, and
/// stops cleanly; a second one ends the process as the signal's default does. Main thread only.
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
