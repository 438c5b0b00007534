#include "ServersView.h"

#include "ConsoleText.h"
#include "ServerMonitor.h"
#include "TableExport.h"
#include "models/ServerListModel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// How people name a server: where it listens, else its host and process.
QString serverName(const ServerStatus &s)
{
    return s.address.isEmpty() ? QObject::tr("%1 (pid %2)").arg(s.beat.host()).arg(s.beat.pid()) : s.address;
}

} // namespace

ServersView::ServersView(ServerMonitor *monitor, QWidget *parent)
    : QWidget(parent)
    , m_monitor(monitor)
    , m_model(new ServerListModel(this))
{
    auto *layout = new QVBoxLayout(this);
    m_intro = new QLabel(this);
    m_intro->setWordWrap(true);
    m_intro->setTextFormat(Qt::PlainText);
    layout->addWidget(m_intro);
    m_table = new QTableView(this);
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    TableExport::install(m_table, u"flashstock-servers"_s);
    layout->addWidget(m_table, 1);
    connect(m_monitor, &ServerMonitor::changed, this, &ServersView::refresh);
    refresh();
}

QString ServersView::introText() const
{
    return m_intro->text();
}

void ServersView::refresh()
{
    m_model->setServers(m_monitor->servers());
    const QString where =
        tr("Every flashstock-server working on this book, from the heartbeat its expiry writes into the book: a server "
           "turns red, with the time of its last heartbeat, once one is %1 overdue and it does not answer. Readiness "
           "is its /readyz, the rates its /metrics.")
            .arg(ConsoleText::duration(ExpirerBeat::kMissedAfterMs));
    const QString token =
        m_monitor->hasReadToken()
            ? tr("The console sends its read token to /metrics.")
            : tr("The console has no read token, so a server that asks for one shows no rates: start the console with "
                 "FLASHSTOCK_TOKEN set, or --token-file FILE (mode 0600), holding a token with the read scope "
                 "(flashstock-cli token add NAME --scope read).");
    m_intro->setText(m_monitor->servers().isEmpty()
                         ? tr("No flashstock-server has worked on this book in the last day (a server writes a "
                              "heartbeat with each expiry pass; one started with --expire-every 0 writes none).")
                         : where + u' ' + token);
}

QString ServersView::statusLine(const ServerMonitor &monitor, bool *alarm, bool *warn)
{
    using State = ServerStatus::State;
    int up = 0, late = 0, notReady = 0;
    QList<const ServerStatus *> stopped;
    for (const ServerStatus &s : monitor.servers()) {
        switch (s.state) {
        case State::Up: ++up; notReady += s.ready == false ? 1 : 0; break;
        case State::Late: ++late; break;
        case State::Stopped: stopped << &s; break;
        case State::Replaced: break;
        }
    }
    if (alarm)
        *alarm = !stopped.isEmpty();
    if (warn)
        *warn = late > 0 || notReady > 0;
    if (up + late + stopped.size() == 0)
        return {};
    QStringList parts;
    if (stopped.size() == 1)
        parts << tr("Server %1 STOPPED at %2").arg(serverName(*stopped.first()),
                                                   ConsoleText::utcTime(stopped.first()->beat.atMs));
    else if (!stopped.isEmpty())
        parts << tr("%n servers STOPPED, the last at %1", nullptr, int(stopped.size()))
                     .arg(ConsoleText::utcTime(stopped.first()->beat.atMs)); // newest heartbeat first
    parts << (stopped.isEmpty() ? tr("Servers: %n up", nullptr, up) : tr("%n up", nullptr, up));
    if (late > 0)
        parts << tr("%n with a late heartbeat", nullptr, late);
    if (notReady > 0)
        parts << tr("%n not ready", nullptr, notReady);
    return parts.join(u", "_s);
}

} // namespace flashstock
