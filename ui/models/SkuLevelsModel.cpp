#include "SkuLevelsModel.h"

#include "ModelRoles.h"

#include <QBrush>
#include <QLocale>
#include <QPalette>

namespace flashstock {

SkuLevelsModel::SkuLevelsModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int SkuLevelsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SkuLevelsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SkuLevelsModel::raw(const SkuSample &s, int column) const
{
    switch (column) {
    case Sku: return s.sku;
    case Available: return s.available;
    case GateAvailable: return s.gateAvailable;
    case Drift: return s.gateAvailable < 0 ? QVariant() : QVariant(s.gateAvailable - s.available);
    case Locked: return s.locked;
    case Sold: return s.sold;
    case Total: return s.total;
    case TakenRate: return m_rates.value(s.sku).taken;
    case RefusedRate: return s.gateRefused < 0 ? -1.0 : qMax(0.0, m_rates.value(s.sku).refused);
    default: return {};
    }
}

QVariant SkuLevelsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const SkuSample &s = m_rows.at(index.row());
    const QVariant v = raw(s, index.column());
    switch (role) {
    case RawRole:
        return v;
    case Qt::DisplayRole:
        if (index.column() == Sku)
            return v;
        if (index.column() == GateAvailable && s.gateAvailable < 0)
            return tr("n/a");
        if (index.column() == Drift && !v.isValid())
            return QString();
        if (index.column() == RefusedRate && v.toDouble() < 0)
            return tr("n/a");
        if (index.column() == TakenRate || index.column() == RefusedRate)
            return QLocale().toString(v.toDouble(), 'f', 1);
        return QLocale().toString(v.toLongLong());
    case Qt::TextAlignmentRole:
        return index.column() == Sku ? int(Qt::AlignLeft | Qt::AlignVCenter) : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
        if (index.column() == Drift && v.isValid() && v.toLongLong() != 0)
            return QBrush(Qt::red);
        return {};
    case Qt::ToolTipRole:
        if (index.column() == Drift)
            return tr("Gate available minus book available; non-zero while reserves are in flight or after drift");
        if (index.column() == RefusedRate)
            return tr("Reserves refused per second (out of stock, over the per-user limit, sale closed, paused), "
                      "as the gate counts them; n/a when book-only");
        return {};
    default:
        return {};
    }
}

QVariant SkuLevelsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Sku: return tr("SKU");
    case Available: return tr("Available (book)");
    case GateAvailable: return tr("Available (gate)");
    case Drift: return tr("Gate − book");
    case Locked: return tr("Locked");
    case Sold: return tr("Sold");
    case Total: return tr("Total");
    case TakenRate: return tr("Taken/s");
    case RefusedRate: return tr("Refused/s");
    default: return {};
    }
}

void SkuLevelsModel::setSamples(const QList<SkuSample> &samples, const QHash<QString, SkuRates> &rates)
{
    bool sameKeys = samples.size() == m_rows.size();
    for (qsizetype i = 0; sameKeys && i < samples.size(); ++i)
        sameKeys = samples[i].sku == m_rows[i].sku;
    if (!sameKeys) {
        beginResetModel();
        m_rows = samples;
        m_rates = rates;
        endResetModel();
        return;
    }
    // Same SKUs: update in place so selection and scroll position survive the 1 s refresh.
    m_rows = samples;
    m_rates = rates;
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

} // namespace flashstock
