#pragma once

#include "Result.h"

#include <QString>

#include <cstdio>
#include <mutex>

namespace flashstock::server {

/// The optional access log (`--access-log FILE`, `-` for stderr): one line per answered
/// request: time (UTC), client address, method, path, status, result word, milliseconds,
/// token name. Never a secret (no header is logged). Thread-safe.
class AccessLog {
public:
    AccessLog() = default;
    ~AccessLog();
    AccessLog(const AccessLog &) = delete;
    AccessLog &operator=(const AccessLog &) = delete;

    /// Opens `path` for appending (created 0600), or stderr for `-`. Unavailable if it cannot.
    [[nodiscard]] Result<void> open(const QString &path);
    bool isOpen() const { return m_file != nullptr; }
    /// One line. Every text field is escaped (control characters, spaces, `%` and non-ASCII
    /// bytes as %XX; `-` for an empty one), so whatever a client sends, a line has its eight
    /// fields in order.
    void write(const QString &client, const QByteArray &method, const QByteArray &path, int status,
               const QString &result, double seconds, const QString &principal);

private:
    std::mutex m_mutex;
    std::FILE *m_file = nullptr;
    bool m_ownsFile = false;
};

} // namespace flashstock::server
