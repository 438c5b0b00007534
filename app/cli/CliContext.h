#pragma once

#include "Engine.h"
#include "Result.h"

#include <QString>

#include <memory>

namespace flashstock {

/// Global options and lazily opened resources shared by every command of one CLI run.
class CliContext {
public:
    QString dataDir;       ///< `--data-dir`, `FLASHSTOCK_DATA_DIR`, else $XDG_DATA_HOME/flashstock
    QString dbUrl;         ///< `--db`, else the SQLite file flashstock.db in the data dir
    QString redisUrl;      ///< `--redis`; `none` = book-only
    QString operatorName;  ///< `--operator`, else the OS user name
    bool json = false;     ///< `--json`

    /// Opens the engine on first use (creating the data dir for the embedded defaults).
    /// Without `--redis`, a command that needs the gate (`needsGate`) starts or reuses the
    /// data dir's private redis-server.
    [[nodiscard]] Result<Engine *> engine(bool needsGate = true);

    /// Lines for stderr: where the embedded gate is, gate warnings the engine collected.
    QStringList takeNotes();

    /// The OS user name, for the default operator.
    static QString osUserName();
    /// The default data dir: $XDG_DATA_HOME/flashstock (usually ~/.local/share/flashstock).
    static QString defaultDataDir();

private:
    std::unique_ptr<Engine> m_engine;
    QStringList m_notes;
};

} // namespace flashstock
