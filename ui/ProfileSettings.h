#pragma once

#include "ConsoleTypes.h"

namespace flashstock {

/// The console's saved connection profile: `flashstock.ini` in the data dir (the user's
/// alone: 0600), group [console] (keys book, gate, operator), and its layout, group
/// [console_layout]. Passwords are never written: they are stripped
/// from URLs before saving and come from the environment at connect time (PGPASSWORD for
/// PostgreSQL, FLASHSTOCK_REDIS_PASSWORD for Redis: EngineOpener). Any thread; plain
/// functions.
class ProfileSettings {
public:
    /// The settings file of `dataDir`.
    static QString filePath(const QString &dataDir);
    /// True if `dataDir` has a saved profile.
    static bool exists(const QString &dataDir);
    /// `base` (its data dir chooses the file) with the saved book, gate and operator laid over it.
    static EngineProfile load(const EngineProfile &base);
    /// Saves `profile` without passwords. False if the file cannot be written.
    static bool save(const EngineProfile &profile);
    /// `url` with any password removed (userinfo and a `password=` query item).
    static QString stripPassword(const QString &url);
    /// The console's saved layout `name` (a widget's saveState()), group [console_layout] of
    /// `dataDir`'s file; empty if none.
    static QByteArray layout(const QString &dataDir, const QString &name);
    /// Saves layout `name`. False if the data dir does not exist (nothing is created before
    /// the engine opener made it, 0700) or the file cannot be written.
    static bool saveLayout(const QString &dataDir, const QString &name, const QByteArray &state);
};

} // namespace flashstock
