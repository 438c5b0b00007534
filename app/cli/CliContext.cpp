#include "CliContext.h"

using namespace Qt::StringLiterals;

namespace flashstock {

Result<Engine *> CliContext::engine(GateNeed need)
{
    if (m_engine)
        return m_engine.get();
    auto resolved = EngineOpener::resolve(profile);
    if (!resolved)
        return std::unexpected(resolved.error());
    auto opened = EngineOpener::open(*resolved, u"cli"_s, need);
    if (!opened)
        return std::unexpected(opened.error());
    m_gate = opened->gate;
    const QString socket = opened->profile.gate ? opened->profile.gate->socketPath : QString();
    if (!m_gate.problem.isEmpty())
        m_notes << u"gate: the private redis-server of %1 did not start, so the gate is down (reserves answer "
                   u"gate_unavailable; --redis none runs book-only): %2"_s.arg(resolved->dataDir, m_gate.problem);
    else if (m_gate.startedNow)
        m_notes << u"gate: started the private redis-server of %1 at %2 (stop it with: flashstock-cli embedded stop)"_s
                       .arg(resolved->dataDir, socket);
    m_engine = std::move(opened->engine);
    return m_engine.get();
}

QStringList CliContext::takeNotes()
{
    QStringList notes = std::exchange(m_notes, {});
    if (!m_engine)
        return notes;
    const WarningRing warnings = m_engine->takeWarnings();
    if (warnings.dropped() > 0)
        notes << u"(%1 older gate warnings were dropped)"_s.arg(warnings.dropped());
    for (const EngineWarning &w : warnings.items())
        notes << w.message;
    return notes;
}

} // namespace flashstock
