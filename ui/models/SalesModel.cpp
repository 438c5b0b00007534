#include "SalesModel.h"

#include "ConsoleText.h"
#include "ModelRoles.h"

#include <QLocale>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace flashstock {

SalesModel::SalesModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int SalesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_sales.size());
}

int SalesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

const Sale *SalesModel::saleAt(int row) const
{
    return row >= 0 && row < m_sales.size() ? &m_sales[row] : nullptr;
}

QVariant SalesModel::raw(int row, int column) const
{
    const Sale &s = m_sales.at(row);
    const bool latest = m_latestSaleOfSku.value(s.sku) == s.id;
    switch (column) {
    case Id: return s.id;
    case Sku: return s.sku;
    case Units: return s.units;
    case Window: return s.startMs;
    case Hold: return s.holdSeconds;
    case Limit: return s.perUserLimit;
    case Status: return saleStatusName(s.status);
    case SoldPercent: {
        // Progress only means something for the SKU's latest sale: units out of its pool.
        if (!latest || s.units <= 0 || !m_levels.contains(s.sku))
            return {};
        const SkuSample &l = m_levels[s.sku];
        const qint64 taken = qBound<qint64>(0, s.units - l.available, s.units);
        return 100.0 * double(taken) / double(s.units);
    }
    case ReserveRate:
    case RejectRate: {
        if (!latest || s.status != SaleStatus::Open)
            return {};
        const SkuRates rates = m_rates.value(s.sku);
        if (column == ReserveRate)
            return rates.taken;
        return rates.refused >= 0 ? QVariant(rates.refused) : QVariant();
    }
    default: return {};
    }
}

QVariant SalesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QVariant v = raw(index.row(), index.column());
    const Sale &s = m_sales.at(index.row());
    switch (role) {
    case RawRole:
        return v;
    case Qt::DisplayRole:
        switch (index.column()) {
        case Id: return u"#%1"_s.arg(s.id);
        case Units: return QLocale().toString(s.units);
        case Window: {
            const QString from = s.startMs ? ConsoleText::utcTime(s.startMs, false) : tr("on start");
            const QString to = s.endMs ? ConsoleText::utcTime(s.endMs, false) : tr("until stopped");
            return tr("%1 → %2").arg(from, to);
        }
        case Hold: return tr("%1 s").arg(s.holdSeconds);
        case Limit: return s.perUserLimit ? QLocale().toString(s.perUserLimit) : tr("none");
        case Status: return ConsoleText::saleState(s, m_nowMs);
        case SoldPercent: return v.isValid() ? u"%1 %"_s.arg(v.toDouble(), 0, 'f', 1) : QString();
        case ReserveRate: return v.isValid() ? tr("%1/s").arg(v.toDouble(), 0, 'f', 1) : QString();
        case RejectRate:
            if (v.isValid())
                return tr("%1/s").arg(v.toDouble(), 0, 'f', 1);
            return s.status == SaleStatus::Open && m_latestSaleOfSku.value(s.sku) == s.id ? tr("n/a") : QString();
        default: return v;
        }
    case ExportRole:
        switch (index.column()) {
        case Window: return u"%1 .. %2"_s.arg(s.startMs ? ConsoleText::isoUtc(s.startMs) : QString(),
                                                s.endMs ? ConsoleText::isoUtc(s.endMs) : QString());
        case Status: return ConsoleText::saleState(s, m_nowMs);
        default: return v;
        }
    case Qt::ToolTipRole:
        if (index.column() == Window) {
            QStringList hints;
            if (s.startMs)
                hints << tr("Start: %1").arg(ConsoleText::localHint(s.startMs));
            if (s.endMs)
                hints << tr("End: %1").arg(ConsoleText::localHint(s.endMs));
            return hints.isEmpty() ? QVariant() : QVariant(hints.join(u'\n'));
        }
        if (index.column() == Status && s.bookOnly)
            return tr("Book-only: reserves skip the gate and go straight to the book (slower, exact)");
        return {};
    case Qt::TextAlignmentRole:
        switch (index.column()) {
        case Units: case Hold: case Limit: case SoldPercent: case ReserveRate: case RejectRate:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        default:
            return int(Qt::AlignLeft | Qt::AlignVCenter);
        }
    default:
        return {};
    }
}

QVariant SalesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Id: return tr("Sale");
    case Sku: return tr("SKU");
    case Units: return tr("Units");
    case Window: return tr("Window");
    case Hold: return tr("Hold");
    case Limit: return tr("Per user");
    case Status: return tr("Status");
    case SoldPercent: return tr("Taken");
    case ReserveRate: return tr("Reserve rate");
    case RejectRate: return tr("Reject rate");
    default: return {};
    }
}

void SalesModel::setSales(const QList<Sale> &sales, const QList<SkuSample> &levels, const QHash<QString, SkuRates> &rates,
                          qint64 nowMs)
{
    m_nowMs = nowMs;
    bool sameKeys = sales.size() == m_sales.size();
    for (qsizetype i = 0; sameKeys && i < sales.size(); ++i)
        sameKeys = sales[i].id == m_sales[i].id;
    if (!sameKeys)
        beginResetModel();
    m_sales = sales;
    m_levels.clear();
    for (const SkuSample &l : levels)
        m_levels.insert(l.sku, l);
    m_rates = rates;
    m_latestSaleOfSku.clear();
    for (const Sale &s : m_sales) // newest first: the first one seen is the latest
        if (!m_latestSaleOfSku.contains(s.sku))
            m_latestSaleOfSku.insert(s.sku, s.id);
    if (!sameKeys)
        endResetModel();
    else if (!m_sales.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_sales.size()) - 1, ColumnCount - 1));
}

} // namespace flashstock
