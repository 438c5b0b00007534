#include "EngineWarning.h"

#include <QStringList>

using namespace Qt::StringLiterals;

namespace flashstock {

QString warningKindName(WarningKind kind)
{
    // In the enum's order; a kind added at the end gets its name here.
    static_assert(int(WarningKind::RefusalNotCounted) == 9, "a warning kind without a name");
    static const QStringList names{u"gate_unavailable"_s,   u"gate_restored"_s,      u"gate_not_loaded"_s,
                                   u"gate_not_raised"_s,    u"gate_not_rebuilt"_s,   u"sale_not_pushed"_s,
                                   u"token_not_released"_s, u"token_not_settled"_s,  u"token_not_sold"_s,
                                   u"refusal_not_counted"_s};
    return names.value(int(kind), u"unknown"_s);
}

WarningRing::WarningRing(qsizetype capacity)
    : m_capacity(qMax<qsizetype>(1, capacity))
{
}

void WarningRing::add(EngineWarning warning)
{
    if (m_items.size() >= m_capacity) {
        m_items.removeFirst();
        ++m_dropped;
    }
    m_items.append(std::move(warning));
}

void WarningRing::add(const QList<EngineWarning> &warnings, qint64 alreadyDropped)
{
    m_dropped += alreadyDropped;
    for (const EngineWarning &w : warnings)
        add(w);
}

WarningRing WarningRing::take()
{
    return std::exchange(*this, WarningRing(m_capacity));
}

void WarningRing::clear()
{
    m_items.clear();
    m_dropped = 0;
}

} // namespace flashstock
