#include "WarningModel.h"

#include "ConsoleText.h"
#include "ModelRoles.h"

using namespace Qt::StringLiterals;

namespace flashstock {

WarningModel::WarningModel(qsizetype capacity, QObject *parent)
    : QAbstractTableModel(parent)
    , m_ring(capacity)
{
}

const EngineWarning *WarningModel::at(int row) const
{
    const qsizetype n = m_ring.size();
    return row >= 0 && row < n ? &m_ring.items().at(n - 1 - row) : nullptr;
}

QVariant WarningModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const EngineWarning &w = *at(index.row());
    if (role == RawRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
        case Time: return role == RawRole ? QVariant(w.atMs) : QVariant(ConsoleText::localHint(w.atMs));
        case Kind: return warningKindName(w.kind);
        case Sku: return w.sku;
        case Message: return w.message;
        default: return {};
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Time: return ConsoleText::utcTime(w.atMs);
    case Kind: return warningKindName(w.kind).replace(u'_', u' ');
    case Sku: return w.sku;
    case Message: return w.message;
    default: return {};
    }
}

QVariant WarningModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Time: return tr("Time");
    case Kind: return tr("Kind");
    case Sku: return tr("SKU");
    case Message: return tr("What happened");
    default: return {};
    }
}

void WarningModel::add(const QList<EngineWarning> &warnings, qint64 droppedBySender)
{
    if (warnings.isEmpty() && droppedBySender == 0)
        return;
    // At most one batch a second: a reset is cheaper to get right than row moves in a ring.
    beginResetModel();
    m_ring.add(warnings, droppedBySender);
    endResetModel();
    emit countChanged();
}

void WarningModel::clear()
{
    beginResetModel();
    m_ring.clear();
    endResetModel();
    emit countChanged();
}

} // namespace flashstock
