#pragma once

#include "Result.h"
#include "gate/RedisUrl.h"
#include "store/DbUrl.h"

#include <optional>

#include "ConsoleTypes.h"

namespace flashstock {

/// The console's saved connection profile: `flashstock.ini` in the data dir, group
/// [console] (keys book, gate, operator). Passwords are never written: they are stripped
/// from URLs before saving and come from the environment at connect time (PGPASSWORD for
/// PostgreSQL, FLASHSTOCK_REDIS_PASSWORD for Redis). Any thread; plain functions.
class ProfileSettings {
public:
    /// The settings file of `dataDir`.
    static QString filePath(const QString &dataDir);
    /// True if `dataDir` has a saved profile.
    static bool exists(const QString &dataDir);
    /// `base` (its data dir chooses the file) with the saved book, gate and operator laid over it.
    static ConnectionProfile load(const ConnectionProfile &base);
    /// Saves `profile` without passwords. False if the file cannot be written.
    static bool save(const ConnectionProfile &profile);
    /// `url` with any password removed (userinfo and a `password=` query item).
    static QString stripPassword(const QString &url);
    /// A gate URL (`redis://`, `rediss://`, `unix://`) given FLASHSTOCK_REDIS_PASSWORD when it
    /// names no password itself and the variable is set; anything else unchanged. Connect time only.
    static QString withRedisPassword(const QString &url);
    /// The profile's book: its --db URL, or the data dir's flashstock.db (creating the data
    /// dir, 0700, when the embedded defaults need it). InvalidArgument for a bad URL or dir.
    [[nodiscard]] static Result<DbUrl> bookUrl(const ConnectionProfile &profile);
    /// The profile's gate when it names one (`redisUrl` not empty): its URL with the password
    /// from the environment, or nullopt for `none` (book-only). An empty `redisUrl` means the
    /// data dir's embedded redis-server, which the caller starts (EmbeddedRedis): nullopt.
    /// InvalidArgument for a malformed URL.
    [[nodiscard]] static Result<std::optional<RedisUrl>> gateUrl(const ConnectionProfile &profile);
};

} // namespace flashstock
