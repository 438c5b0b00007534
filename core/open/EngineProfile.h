#pragma once

#include <QString>

namespace flashstock {

/// Where an engine finds its book and gate and for whom it acts, as an operator gives it
/// (command line, saved settings, environment). Empty fields take the defaults that every
/// FlashStock binary shares (CLI, console, drills, the server); EngineOpener applies them.
/// A plain value; any thread.
struct EngineProfile {
    QString dataDir;      ///< where the embedded defaults live; empty: dataDirFor({})
    QString dbUrl;        ///< the book of record; empty: the SQLite file flashstock.db in the data dir
    QString redisUrl;     ///< the gate; empty: the data dir's private redis-server; `none`: book-only
    QString operatorName; ///< written on ledger rows and decisions; empty: osUserName()

    /// `given` if not empty, else FLASHSTOCK_DATA_DIR, else $XDG_DATA_HOME/flashstock
    /// (usually ~/.local/share/flashstock). Nothing is created.
    static QString dataDirFor(const QString &given);
    /// The OS user name (the default operator); `unknown` if the system has none.
    static QString osUserName();
    /// The data dir's settings file, `flashstock.ini` (groups [console], [approval]; the
    /// server's [server]). Nothing is created.
    static QString settingsFile(const QString &dataDir);
};

} // namespace flashstock
