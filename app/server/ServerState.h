#pragma once

#include "auth/AccessToken.h"

#include <QString>
#include <QStringList>

#include <chrono>
#include <memory>
#include <mutex>

namespace flashstock::server {

/// How long the bearer tokens last read from the book are taken: a revoke holds within this
/// long, so a server that cannot read them for longer takes no token at all.
inline constexpr std::chrono::seconds kTokensTrustedFor{5};

/// A value published by a background thread and read by request threads, which never wait
/// on the book or the gate for it: the newest snapshot, and how old it is.
template <typename T>
class Published {
public:
    /// Replaces the snapshot, taken at `at` (when its read began; by default now). Any thread.
    void publish(T value, std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now())
    {
        auto next = std::make_shared<const T>(std::move(value));
        std::lock_guard lock(m_mutex);
        m_value = std::move(next);
        m_at = at;
    }
    /// The newest snapshot (nullptr before the first publish). Any thread.
    std::shared_ptr<const T> current() const
    {
        std::lock_guard lock(m_mutex);
        return m_value;
    }
    /// The newest snapshot if it was taken at most `maxAge` ago; else nullptr. Any thread.
    std::shared_ptr<const T> currentWithin(std::chrono::steady_clock::duration maxAge) const
    {
        const auto now = std::chrono::steady_clock::now();
        std::lock_guard lock(m_mutex);
        return now - m_at <= maxAge ? m_value : nullptr;
    }
    /// Seconds since the snapshot was taken (a large number before the first).
    double ageSeconds() const
    {
        std::lock_guard lock(m_mutex);
        if (!m_value)
            return 1e9;
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_at).count();
    }

private:
    mutable std::mutex m_mutex;
    std::shared_ptr<const T> m_value;
    std::chrono::steady_clock::time_point m_at;
};

/// What the readiness probe found (GET /readyz): the book and the gate answer, the gate's
/// scripts are loaded.
struct Readiness {
    bool book = false;
    bool gateConfigured = true; ///< false: book-only (`--redis none`), no gate to wait for
    bool gate = false;
    bool scripts = false;
    QStringList down;           ///< what is not ready, for any client (`gate: not answering`; why and where only in the log)
};

} // namespace flashstock::server
