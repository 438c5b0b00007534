#include "GateNodesStatus.h"

#include "ConsoleText.h"

#include <QStringList>

#include <utility>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QString colorOf(const GateNodeHealth &n)
{
    if (!n.reachable)
        return ConsoleText::kRed;
    return n.role == GateNodeHealth::Role::Replica || n.scriptsLoaded ? ConsoleText::kGreen : ConsoleText::kAmber;
}

QString stateOf(const GateNodeHealth &n)
{
    if (!n.reachable)
        return GateNodesStatus::tr("DOWN");
    if (n.role != GateNodeHealth::Role::Replica && !n.scriptsLoaded)
        return GateNodesStatus::tr("up, scripts not loaded, %1").arg(ConsoleText::roundTrip(n.roundTripUs));
    return GateNodesStatus::tr("up, %1").arg(ConsoleText::roundTrip(n.roundTripUs));
}

} // namespace

GateNodesStatus::GateNodesStatus(QWidget *parent)
    : QLabel(parent)
{
    setTextFormat(Qt::RichText);
    hide();
}

void GateNodesStatus::setNodes(const QList<GateNodeHealth> &nodes)
{
    if (nodes.size() < 2) {
        m_summary.clear();
        clear();
        setToolTip({});
        hide();
        return;
    }
    int masters = 0, mastersUp = 0, replicas = 0, replicasUp = 0;
    QString dots;
    QStringList rows;
    bool firstReplica = true;
    for (const GateNodeHealth &n : nodes) {
        const bool replica = n.role == GateNodeHealth::Role::Replica;
        (replica ? replicas : masters) += 1;
        (replica ? replicasUp : mastersUp) += n.reachable ? 1 : 0;
        if (replica && std::exchange(firstReplica, false))
            dots += u" "_s; // masters, a gap, replicas
        dots += u"<span style=\"color:%1\">●</span>"_s.arg(colorOf(n));
        const QString part = replica ? tr("replica")
                                      : n.slotCount == 1 ? tr("master, 1 slot") : tr("master, %1 slots").arg(n.slotCount);
        const QString state = stateOf(n) + (n.detail.isEmpty() ? QString() : u" — "_s + n.detail);
        rows << u"<tr><td>%1</td><td>%2</td><td>%3</td></tr>"_s.arg(ConsoleText::badge(colorOf(n), n.address), part,
                                                                  state.toHtmlEscaped());
    }
    m_summary = tr("Nodes: %1/%2 masters, %3/%4 replicas up").arg(mastersUp).arg(masters).arg(replicasUp).arg(replicas);
    setText(dots + u" "_s + m_summary.toHtmlEscaped());
    setToolTip(u"<b>%1</b><table cellspacing=\"4\">%2</table>"_s.arg(tr("Redis Cluster nodes of the gate"),
                                                                     rows.join(QString())));
    show();
}

} // namespace flashstock
