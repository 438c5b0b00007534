#include "SkuLevelsModel.h"

#include "ConsoleText.h"
#include "ModelRoles.h"

#include <QBrush>
#include <QFont>
#include <QLocale>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

const QColor kPausedRed(0xc6, 0x28, 0x28);

QString idList(const QList<qint64> &ids)
{
    QStringList out;
    for (qint64 id : ids)
        out << u"#%1"_s.arg(id);
    return out.join(u", "_s);
}

} // namespace

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

int SkuLevelsModel::rowOf(const QString &sku) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].sku == sku)
            return i;
    return -1;
}

QVariant SkuLevelsModel::raw(const SkuSample &s, int column) const
{
    switch (column) {
    case Sku: return s.sku;
    case SaleState: return s.sale ? saleStatusName(s.sale->status) : QString();
    case Available: return s.available;
    case GateAvailable: return s.gateAvailable;
    case Drift: return s.gateAvailable < 0 ? QVariant() : QVariant(s.gateAvailable - s.available);
    case Locked: return s.locked;
    case Sold: return s.sold;
    case Total: return s.total;
    case Buckets: return s.buckets;
    case PastExpiry: return s.overdue.orders;
    case TakenRate: return m_rates.value(s.sku).taken;
    case RefusedRate: return s.gateRefused < 0 ? -1.0 : qMax(0.0, m_rates.value(s.sku).refused);
    default: return {};
    }
}

QString SkuLevelsModel::saleText(const SkuSample &s) const
{
    QString text = s.sale ? ConsoleText::saleState(*s.sale, m_nowMs) : tr("no sale");
    if (!s.pausedBy.isEmpty())
        text = tr("‖ paused by %1 · %2").arg(idList(s.pausedBy), text);
    return text;
}

QVariant SkuLevelsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const SkuSample &s = m_rows.at(index.row());
    const int column = index.column();
    const QVariant v = raw(s, column);
    const bool noGateFigure = (column == GateAvailable || column == Drift) && s.gateAvailable < 0;
    switch (role) {
    case RawRole:
        return v;
    case ExportRole:
        if (column == SaleState)
            return saleText(s);
        if (noGateFigure || (column == RefusedRate && v.toDouble() < 0))
            return QString();
        return v;
    case Qt::DisplayRole:
        if (column == Sku)
            return v;
        if (column == SaleState)
            return saleText(s);
        if (noGateFigure || (column == RefusedRate && v.toDouble() < 0))
            return tr("n/a");
        if (column == PastExpiry)
            return s.overdue.orders ? tr("%L1 (%L2 units)").arg(s.overdue.orders).arg(s.overdue.units) : u"0"_s;
        if (column == TakenRate || column == RefusedRate)
            return QLocale().toString(v.toDouble(), 'f', 1);
        return QLocale().toString(v.toLongLong());
    case Qt::TextAlignmentRole:
        return column == Sku || column == SaleState ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                                    : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
        if (column == Drift && v.isValid() && v.toLongLong() != 0)
            return QBrush(Qt::red);
        if ((column == SaleState && !s.pausedBy.isEmpty()) || (column == PastExpiry && s.overdue.orders > 0))
            return QBrush(kPausedRed);
        if (noGateFigure)
            return QBrush(Qt::gray);
        return {};
    case Qt::FontRole:
        if (column == SaleState && !s.pausedBy.isEmpty()) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::ToolTipRole:
        if (column == SaleState && !s.pausedBy.isEmpty())
            return tr("Discrepancy %1 waits for approval: reserves of %2 answer paused until an approver approves or "
                      "rejects it (Reconciliation view)")
                .arg(idList(s.pausedBy), s.sku);
        if (column == SaleState && s.sale)
            return tr("Sale #%1 (the SKU's latest, which governs its reserves)").arg(s.sale->id);
        if (column == Drift)
            return noGateFigure ? tr("No gate figure: the gate is down, not configured (book-only), or not loaded")
                                : tr("Gate available minus book available; non-zero while reserves are in flight or "
                                     "after drift");
        if (column == GateAvailable && noGateFigure)
            return tr("No gate figure: the gate is down, not configured (book-only), or not loaded");
        if (column == PastExpiry && s.overdue.orders > 0)
            return tr("Holds whose expiry has passed and that still lock units; the oldest expired %1 ago")
                .arg(ConsoleText::duration(m_nowMs - s.overdue.oldestDueMs));
        if (column == RefusedRate)
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
    case SaleState: return tr("Sale");
    case Available: return tr("Available (book)");
    case GateAvailable: return tr("Available (gate)");
    case Drift: return tr("Gate − book");
    case Locked: return tr("Locked");
    case Sold: return tr("Sold");
    case Total: return tr("Total");
    case Buckets: return tr("Buckets");
    case PastExpiry: return tr("Past expiry");
    case TakenRate: return tr("Taken/s");
    case RefusedRate: return tr("Refused/s");
    default: return {};
    }
}

void SkuLevelsModel::setSamples(const QList<SkuSample> &samples, const QHash<QString, SkuRates> &rates, qint64 nowMs)
{
    m_nowMs = nowMs;
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
