#pragma once

#include <QString>

namespace flashstock::server {

/// The server's own log on stderr: one line per start, stop and trouble. Under systemd
/// (JOURNAL_STREAM set) each line carries its syslog priority as `<N>` for journald;
/// otherwise it starts with the UTC time and the level. Never given a secret. Thread-safe.
class ServerLog {
public:
    enum class Level { Error = 3, Warning = 4, Info = 6 };

    /// Writes one line (newlines in `text` become spaces).
    static void write(Level level, const QString &text);
    static void info(const QString &text) { write(Level::Info, text); }
    static void warning(const QString &text) { write(Level::Warning, text); }
    static void error(const QString &text) { write(Level::Error, text); }
    /// Trouble that can repeat once per request (Redis down, a client flood): written at
    /// most once per 10 s per `key`, saying how many lines of that key were left out.
    static void trouble(const QString &key, const QString &text);
};

} // namespace flashstock::server
