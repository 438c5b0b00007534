#pragma once

#include "Engine.h"
#include "Result.h"
#include "open/EngineOpener.h"

#include <QString>
#include <QStringList>
#include <QTextStream>

#include <optional>

namespace flashstock {

/// Global options, the runner's streams and the engine shared by every command of one CLI
/// run. The engine is opened lazily, through EngineOpener (the same rules as every binary).
class CliContext {
public:
    /// `out` and `err` are the runner's streams (stdout and stderr, or strings in tests).
    CliContext(QTextStream &out, QTextStream &err) : out(out), err(err) {}

    /// `--data-dir` (else FLASHSTOCK_DATA_DIR, else XDG; always set by the runner), `--db`,
    /// `--redis`, `--operator` (else the OS user; always set by the runner).
    EngineProfile profile;
    bool json = false;  ///< `--json`
    QTextStream &out;   ///< for commands that print as they go (the `--every` loops); else use CommandOutput
    QTextStream &err;   ///< ditto, for their errors and notes

    /// Opens the engine on first use (creating the data dir for the embedded defaults).
    /// Without `--redis`, a command that needs the gate (`need`) starts or reuses the data
    /// dir's private redis-server; if it does not start, the gate is down (see gate()).
    [[nodiscard]] Result<Engine *> engine(GateNeed need = GateNeed::Needed);
    /// What opening found about the gate (default-constructed before engine() succeeded).
    const GateReport &gate() const { return m_gate; }

    /// Lines for stderr since the last call: where the embedded gate is or why it is down,
    /// then the engine's warnings.
    QStringList takeNotes();

private:
    std::unique_ptr<Engine> m_engine;
    GateReport m_gate;
    QStringList m_notes;
};

} // namespace flashstock
