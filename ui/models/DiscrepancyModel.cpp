#include "DiscrepancyModel.h"

#include "ConsoleText.h"
#include "ModelRoles.h"

#include <QBrush>
#include <QFont>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace flashstock {

QString DiscrepancyModel::kindText(DiscrepancyKind kind)
{
    return discrepancyKindName(kind).replace(u'_', u' ');
}

QString DiscrepancyModel::statusText(DiscrepancyStatus status)
{
    return discrepancyStatusName(status).replace(u'_', u' ');
}

QString DiscrepancyModel::levelText(DiscrepancyLevel level)
{
    switch (level) {
    case DiscrepancyLevel::None: return {};
    case DiscrepancyLevel::Available: return tr("available");
    case DiscrepancyLevel::Locked: return tr("locked");
    case DiscrepancyLevel::Sold: return tr("sold");
    case DiscrepancyLevel::OrderLocked: return tr("order's locked units");
    case DiscrepancyLevel::LedgerRows: return tr("ledger rows");
    case DiscrepancyLevel::RefundRecords: return tr("refund records");
    }
    return {};
}

QString DiscrepancyModel::approvalText(const Discrepancy &d, qint64 fourEyesUnits)
{
    if (d.status != DiscrepancyStatus::PendingApproval || std::holds_alternative<std::monostate>(d.correction))
        return {};
    if (const DecisionRecord *first = d.firstApproval())
        return tr("first approval by %1 at %2, needs a second approver")
            .arg(first->operatorName, ConsoleText::utcTime(first->atMs, false));
    if (fourEyesUnits < 0)
        return {};
    const qint64 units = correctionUnits(d);
    return units > fourEyesUnits ? tr("needs two approvers (%1 units)").arg(units) : tr("one approval applies it");
}

DiscrepancyModel::DiscrepancyModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int DiscrepancyModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int DiscrepancyModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

const Discrepancy *DiscrepancyModel::at(int row) const
{
    return row >= 0 && row < m_rows.size() ? &m_rows[row] : nullptr;
}

int DiscrepancyModel::rowOf(qint64 id) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].id == id)
            return i;
    return -1;
}

QVariant DiscrepancyModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Discrepancy &d = m_rows.at(index.row());
    const auto units = [](qint64 v) { return v < 0 ? QVariant(QString()) : QVariant(QLocale().toString(v)); };
    if (role == RawRole || role == ExportRole) {
        const bool exporting = role == ExportRole;
        const auto time = [exporting](qint64 ms) {
            return exporting ? QVariant(ms ? ConsoleText::isoUtc(ms) : QString()) : QVariant(ms);
        };
        const auto figure = [exporting](qint64 v) { return exporting && v < 0 ? QVariant(QString()) : QVariant(v); };
        switch (index.column()) {
        case Id: return d.id;
        case Kind: return discrepancyKindName(d.kind);
        case Sku: return d.sku;
        case Level: return discrepancyLevelName(d.level);
        case Gate: return figure(d.gateValue);
        case Book: return figure(d.bookValue);
        case Ledger: return figure(d.ledgerValue);
        case Delta: return d.delta;
        case Proposal: return d.proposal.isEmpty() && exporting ? d.detail : d.proposal;
        case DetectedAt: return time(d.detectedAtMs);
        case Status: return discrepancyStatusName(d.status);
        case ResolvedBy: return d.resolvers().join(u", "_s);
        case ResolvedAt: return time(d.resolvedAtMs);
        default: return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Id: return u"#%1"_s.arg(d.id);
        case Kind: return kindText(d.kind);
        case Sku: return d.bucket >= 0 ? tr("%1 / bucket %2").arg(d.sku).arg(d.bucket) : d.sku;
        case Level: return levelText(d.level);
        case Gate: return units(d.gateValue);
        case Book: return units(d.bookValue);
        case Ledger: return units(d.ledgerValue);
        case Delta: return d.delta > 0 ? u"+%1"_s.arg(QLocale().toString(d.delta)) : QLocale().toString(d.delta);
        case Proposal: return d.proposal.isEmpty() ? d.detail : d.proposal;
        case DetectedAt: return ConsoleText::utcTime(d.detectedAtMs);
        case Status: {
            const QString approval = approvalText(d, m_fourEyesUnits);
            return approval.isEmpty() ? statusText(d.status) : tr("pending: %1").arg(approval);
        }
        case ResolvedBy: return d.resolvers().join(u", "_s);
        case ResolvedAt: return d.resolvedAtMs ? ConsoleText::utcTime(d.resolvedAtMs) : QString();
        default: return {};
        }
    }
    if (role == Qt::ForegroundRole && index.column() == Status && d.awaitsSecondApprover())
        return QBrush(QColor(ConsoleText::kAmber));
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
        case Gate: case Book: case Ledger: case Delta:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        default:
            return int(Qt::AlignLeft | Qt::AlignVCenter);
        }
    }
    if (role == Qt::FontRole && d.status == DiscrepancyStatus::PendingApproval) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case Proposal: return d.detail.isEmpty() ? d.proposal : d.proposal + u"\n\n"_s + d.detail;
        case DetectedAt: return ConsoleText::localHint(d.detectedAtMs);
        case ResolvedAt: return d.resolvedAtMs ? ConsoleText::localHint(d.resolvedAtMs) : QString();
        case ResolvedBy: return d.reason.isEmpty() ? QString() : tr("Reason: %1").arg(d.reason);
        case Status: return approvalText(d, m_fourEyesUnits);
        default: return {};
        }
    }
    return {};
}

QVariant DiscrepancyModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole) {
        switch (section) {
        case Level: return tr("What the Gate, Book and Ledger figures count");
        case Gate: return tr("The gate's figure, of the level named");
        case Book: return tr("The book's figure as found, of the level named");
        case Ledger: return tr("What the ledger (or the orders) explains, of the level named");
        default: return {};
        }
    }
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Id: return tr("Id");
    case Kind: return tr("Kind");
    case Sku: return tr("SKU");
    case Level: return tr("Level");
    case Gate: return tr("Gate");
    case Book: return tr("Book (found)");
    case Ledger: return tr("Ledger (explains)");
    case Delta: return tr("Delta");
    case Proposal: return tr("Proposed correction / action");
    case DetectedAt: return tr("Detected at");
    case Status: return tr("Status");
    case ResolvedBy: return tr("Resolved by");
    case ResolvedAt: return tr("Resolved at");
    default: return {};
    }
}

void DiscrepancyModel::setFourEyesUnits(qint64 units)
{
    if (units == m_fourEyesUnits)
        return;
    m_fourEyesUnits = units;
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, Status), index(rowCount() - 1, Status));
}

bool DiscrepancyModel::setDiscrepancies(const QList<Discrepancy> &list)
{
    bool sameRows = list.size() == m_rows.size();
    for (qsizetype i = 0; sameRows && i < list.size(); ++i)
        sameRows = list[i].id == m_rows[i].id;
    if (!sameRows) {
        beginResetModel();
        m_rows = list;
        endResetModel();
        return true;
    }
    for (int row = 0; row < int(list.size()); ++row) {
        if (list[row] == m_rows[row])
            continue;
        m_rows[row] = list[row];
        emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    }
    return false;
}

} // namespace flashstock
