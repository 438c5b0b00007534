#pragma once

#include <QList>
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
    /// `--db-password-file`: the PostgreSQL password's file (0600); empty: PGPASSWORD.
    QString dbPasswordFile = {};
    /// `--redis-password-file`: the gate's password file (0600); empty: FLASHSTOCK_REDIS_PASSWORD.
    QString redisPasswordFile = {};

    /// `given` if not empty, else FLASHSTOCK_DATA_DIR, else $XDG_DATA_HOME/flashstock
    /// (usually ~/.local/share/flashstock). Nothing is created.
    static QString dataDirFor(const QString &given);
    /// The OS user name (the default operator); `unknown` if the system has none.
    static QString osUserName();
    /// The data dir's settings file, `flashstock.ini` (groups [console], [approval]; the
    /// server's [server]). Nothing is created.
    static QString settingsFile(const QString &dataDir);

    /// One command-line option every binary takes the same way.
    struct Option {
        QString name;      ///< without the dashes
        QString valueName;
        QString help;
    };
    /// `--db-password-file FILE` and `--redis-password-file FILE` (CLI, console, server).
    static QList<Option> passwordFileOptions();
    /// Sets the password file of option `name` (one of passwordFileOptions()) to `path`;
    /// false if `name` is not one of them.
    bool setPasswordFile(const QString &name, const QString &path);
};

} // namespace flashstock
