#include "ServerListModel.h"

#include "ConsoleText.h"
#include "ModelRoles.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QString rate(double perSecond)
{
    return perSecond < 0 ? u"–"_s : QLocale().toString(perSecond, 'f', 1);
}

} // namespace

ServerListModel::ServerListModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int ServerListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ServerListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

const ServerStatus *ServerListModel::at(int row) const
{
    return row >= 0 && row < m_rows.size() ? &m_rows[row] : nullptr;
}

int ServerListModel::rowOf(const QString &id) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].id() == id)
            return i;
    return -1;
}

QString ServerListModel::stateName(ServerStatus::State state)
{
    switch (state) {
    case ServerStatus::State::Up: return u"up"_s;
    case ServerStatus::State::Late: return u"late"_s;
    case ServerStatus::State::Stopped: return u"stopped"_s;
    case ServerStatus::State::Replaced: return u"replaced"_s;
    }
    return {};
}

QString ServerListModel::stateText(const ServerStatus &s)
{
    switch (s.state) {
    case ServerStatus::State::Up: return tr("up");
    case ServerStatus::State::Late: return tr("answering, heartbeat late since %1").arg(ConsoleText::utcTime(s.beat.atMs));
    case ServerStatus::State::Stopped: return tr("STOPPED at %1").arg(ConsoleText::utcTime(s.beat.atMs));
    case ServerStatus::State::Replaced: return tr("stopped at %1, restarted on its address").arg(
                                            ConsoleText::utcTime(s.beat.atMs));
    }
    return {};
}

QVariant ServerListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ServerStatus &s = m_rows.at(index.row());
    const auto note = [&s] {
        if (s.state == ServerStatus::State::Replaced)
            return QString();
        QStringList parts;
        if (!s.ready.value_or(false) && !s.readyDetail.isEmpty())
            parts << tr("ready: %1").arg(s.readyDetail);
        if (s.requestsPerS < 0 && !s.ratesDetail.isEmpty() && s.state != ServerStatus::State::Stopped)
            parts << tr("rates: %1").arg(s.ratesDetail);
        return parts.join(u"; "_s);
    };
    if (role == RawRole) {
        switch (index.column()) {
        case Host: return s.beat.host();
        case Process: return s.beat.pid();
        case Address: return s.address;
        case State: return stateName(s.state);
        case LastHeartbeat: return s.beat.atMs;
        case Ready: return s.ready ? QVariant(*s.ready) : QVariant();
        case Requests: return s.requestsPerS;
        case Errors: return s.errorsPerS;
        case Note: return note();
        default: return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Host: return s.beat.host();
        case Process: return s.beat.pid();
        case Address: return s.address.isEmpty() ? tr("not recorded") : s.address;
        case State: return stateText(s);
        case LastHeartbeat:
            return tr("%1 (%2 ago)").arg(ConsoleText::utcTime(s.beat.atMs),
                                         ConsoleText::duration(qMax<qint64>(0, s.nowMs - s.beat.atMs)));
        case Ready:
            if (s.state == ServerStatus::State::Stopped || s.state == ServerStatus::State::Replaced)
                return u"–"_s;
            return !s.ready ? tr("unknown") : *s.ready ? tr("ready") : tr("NOT READY");
        case Requests: return rate(s.requestsPerS);
        case Errors: return rate(s.errorsPerS);
        case Note: return note();
        default: return {};
        }
    }
    if (role == Qt::ForegroundRole) {
        switch (s.state) {
        case ServerStatus::State::Stopped: return QBrush(QColor(ConsoleText::kRed));
        case ServerStatus::State::Late: return QBrush(QColor(ConsoleText::kAmber));
        case ServerStatus::State::Replaced: return QBrush(QColor(ConsoleText::kGrey));
        case ServerStatus::State::Up:
            if (index.column() == Ready && s.ready == false)
                return QBrush(QColor(ConsoleText::kRed));
            if (index.column() == Errors && s.errorsPerS > 0)
                return QBrush(QColor(ConsoleText::kAmber));
            return {};
        }
    }
    if (role == Qt::FontRole && s.state == ServerStatus::State::Stopped) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
        case Process: case Requests: case Errors:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        default:
            return int(Qt::AlignLeft | Qt::AlignVCenter);
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case Host: return tr("%1, acting for %2, an expiry pass every %3").arg(s.id(), s.beat.operatorName,
                                                                              ConsoleText::duration(s.beat.everyMs));
        case LastHeartbeat: return ConsoleText::localHint(s.beat.atMs);
        case Ready: return s.readyDetail;
        case Requests: return s.requestsPerS < 0 ? s.ratesDetail
                                                 : tr("API requests answered per second (probes of /metrics, "
                                                      "/readyz and /healthz left out)");
        case Errors: return s.errorsPerS < 0 ? s.ratesDetail : tr("Answers with a 5xx status per second");
        default: return {};
        }
    }
    return {};
}

QVariant ServerListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Host: return tr("Host");
    case Process: return tr("Pid");
    case Address: return tr("Listens on");
    case State: return tr("State");
    case LastHeartbeat: return tr("Last heartbeat");
    case Ready: return tr("Ready");
    case Requests: return tr("Requests/s");
    case Errors: return tr("Errors (5xx)/s");
    case Note: return tr("Missing, and why");
    default: return {};
    }
}

void ServerListModel::setServers(const QList<ServerStatus> &servers)
{
    bool sameRows = servers.size() == m_rows.size();
    for (qsizetype i = 0; sameRows && i < servers.size(); ++i)
        sameRows = servers[i].id() == m_rows[i].id();
    if (!sameRows) {
        beginResetModel();
        m_rows = servers;
        endResetModel();
        return;
    }
    m_rows = servers;
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

} // namespace flashstock
