#include "BucketLevelsModel.h"

#include "ModelRoles.h"

#include <QLocale>

namespace flashstock {

BucketLevelsModel::BucketLevelsModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int BucketLevelsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int BucketLevelsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BucketLevelsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const BucketLevels &b = m_rows.at(index.row());
    qint64 v = 0;
    switch (index.column()) {
    case Bucket: v = b.bucket; break;
    case Available: v = b.available; break;
    case Locked: v = b.locked; break;
    case Sold: v = b.sold; break;
    case Total: v = b.total; break;
    default: return {};
    }
    switch (role) {
    case RawRole:
    case ExportRole:
        return v;
    case Qt::DisplayRole:
        return index.column() == Bucket ? QString::number(v) : QLocale().toString(v);
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant BucketLevelsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Bucket: return tr("Bucket");
    case Available: return tr("Available");
    case Locked: return tr("Locked");
    case Sold: return tr("Sold");
    case Total: return tr("Total");
    default: return {};
    }
}

void BucketLevelsModel::setBuckets(const QList<BucketLevels> &buckets)
{
    bool same = buckets.size() == m_rows.size();
    for (qsizetype i = 0; same && i < buckets.size(); ++i)
        same = buckets[i].bucket == m_rows[i].bucket;
    if (!same) {
        beginResetModel();
        m_rows = buckets;
        endResetModel();
        return;
    }
    m_rows = buckets;
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

} // namespace flashstock
