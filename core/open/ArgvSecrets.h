#pragma once

#include <QStringList>

namespace flashstock {

/// Wipes from this process's own argv, in place, every password a URL argument carries
/// (`scheme://user:PASSWORD@...` and `?password=...`): each byte becomes `*`, so `ps` and
/// /proc/PID/cmdline no longer show it to other local users. Call at the very start of
/// main(), after copying the arguments the program parses (QCoreApplication::arguments()
/// reads argv again). Returns one warning per argument wiped, for stderr, saying where the
/// password belongs instead. Main thread only; never fails.
QStringList wipeArgvPasswords(int argc, char **argv);

} // namespace flashstock
