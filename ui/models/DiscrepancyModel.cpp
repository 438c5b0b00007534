#include "DiscrepancyModel.h"

#include "ModelRoles.h"

#include <QBrush>
#include <QDateTime>
#include <QFont>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace flashstock {

// Kept here rather than calling discrepancyKindName(): the words are the header's contract,
// and the view must build before the reconciler's implementation lands.
QString DiscrepancyModel::kindWord(DiscrepancyKind kind)
{
    switch (kind) {
    case DiscrepancyKind::OrphanPreDeduct: return u"orphan_pre_deduct"_s;
    case DiscrepancyKind::StaleHold: return u"stale_hold"_s;
    case DiscrepancyKind::GateShortfall: return u"gate_shortfall"_s;
    case DiscrepancyKind::GateExcess: return u"gate_excess"_s;
    case DiscrepancyKind::BrokenBucket: return u"broken_bucket"_s;
    case DiscrepancyKind::LedgerMismatch: return u"ledger_mismatch"_s;
    case DiscrepancyKind::OrderLedgerMismatch: return u"order_ledger_mismatch"_s;
    case DiscrepancyKind::StrayRefund: return u"stray_refund"_s;
    case DiscrepancyKind::UnrefundedPayment: return u"unrefunded_payment"_s;
    }
    return {};
}

QString DiscrepancyModel::statusWord(DiscrepancyStatus status)
{
    switch (status) {
    case DiscrepancyStatus::AutoFixed: return u"auto_fixed"_s;
    case DiscrepancyStatus::PendingApproval: return u"pending_approval"_s;
    case DiscrepancyStatus::Approved: return u"approved"_s;
    case DiscrepancyStatus::Rejected: return u"rejected"_s;
    }
    return {};
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
    if (role == RawRole) {
        switch (index.column()) {
        case Id: return d.id;
        case Kind: return kindWord(d.kind);
        case Sku: return d.sku;
        case Gate: return d.gateValue;
        case Book: return d.bookValue;
        case Ledger: return d.ledgerValue;
        case Delta: return d.delta;
        case Proposal: return d.proposal;
        case DetectedAt: return d.detectedAtMs;
        case Status: return statusWord(d.status);
        default: return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Id: return u"#%1"_s.arg(d.id);
        case Kind: return kindWord(d.kind).replace(u'_', u' ');
        case Sku: return d.bucket >= 0 ? tr("%1 / bucket %2").arg(d.sku).arg(d.bucket) : d.sku;
        case Gate: return units(d.gateValue);
        case Book: return units(d.bookValue);
        case Ledger: return units(d.ledgerValue);
        case Delta: return d.delta > 0 ? u"+%1"_s.arg(QLocale().toString(d.delta)) : QLocale().toString(d.delta);
        case Proposal: return d.proposal.isEmpty() ? d.detail : d.proposal;
        case DetectedAt: return QDateTime::fromMSecsSinceEpoch(d.detectedAtMs).toString(u"yyyy-MM-dd HH:mm:ss"_s);
        case Status: return statusWord(d.status).replace(u'_', u' ');
        default: return {};
        }
    }
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
    if (role == Qt::ToolTipRole && index.column() == Proposal)
        return d.detail.isEmpty() ? d.proposal : d.proposal + u"\n\n"_s + d.detail;
    return {};
}

QVariant DiscrepancyModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Id: return tr("Id");
    case Kind: return tr("Kind");
    case Sku: return tr("SKU");
    case Gate: return tr("Gate");
    case Book: return tr("Book");
    case Ledger: return tr("Ledger");
    case Delta: return tr("Delta");
    case Proposal: return tr("Proposed correction / action");
    case DetectedAt: return tr("Detected at");
    case Status: return tr("Status");
    default: return {};
    }
}

void DiscrepancyModel::setDiscrepancies(const QList<Discrepancy> &list)
{
    beginResetModel();
    m_rows = list;
    endResetModel();
}

} // namespace flashstock
