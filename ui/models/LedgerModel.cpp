#include "LedgerModel.h"

#include "ConsoleText.h"
#include "ModelRoles.h"

#include <QLocale>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QString signedUnits(qint64 v)
{
    if (v == 0)
        return u"·"_s;
    return v > 0 ? u"+%1"_s.arg(QLocale().toString(v)) : QLocale().toString(v);
}

} // namespace

LedgerModel::LedgerModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int LedgerModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int LedgerModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LedgerModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LedgerRow &r = m_rows.at(index.row());
    if (role == ExportRole && index.column() == After)
        return QStringList{QString::number(r.after.available), QString::number(r.after.locked),
                           QString::number(r.after.sold)};
    if (role == ExportRole && index.column() == Adjustment) {
        // Order operations have no adjustment: empty fields, never 0.
        if (r.adjustmentKind.isEmpty())
            return QStringList{{}, {}, {}, {}};
        return QStringList{r.adjustmentKind, QString::number(r.adjustmentUnits),
                           r.discrepancy ? QString::number(r.discrepancy) : QString(), r.reason};
    }
    if (role == RawRole || role == ExportRole) {
        switch (index.column()) {
        case Id: return r.id;
        case At: return role == ExportRole ? QVariant(ConsoleText::isoUtc(r.atMs)) : QVariant(r.atMs);
        case Order: return r.order;
        case Operation: return r.operation;
        case Sku: return r.sku;
        case Bucket: return r.bucket;
        case DeltaAvailable: return r.deltaAvailable;
        case DeltaLocked: return r.deltaLocked;
        case DeltaSold: return r.deltaSold;
        case After: return r.after.available;
        case Token: return r.token;
        case Operator: return role == ExportRole && !r.source.isEmpty() ? u"%1 (%2)"_s.arg(r.operatorName, r.source)
                                                                         : r.operatorName;
        case Adjustment: return r.adjustmentUnits;
        default: return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Id: return r.id;
        case At: return ConsoleText::utcTime(r.atMs);
        case Order: return r.order;
        case Operation: return r.operation;
        case Sku: return r.sku;
        case Bucket: return r.bucket;
        case DeltaAvailable: return signedUnits(r.deltaAvailable);
        case DeltaLocked: return signedUnits(r.deltaLocked);
        case DeltaSold: return signedUnits(r.deltaSold);
        case After: return u"%1 / %2 / %3"_s.arg(r.after.available).arg(r.after.locked).arg(r.after.sold);
        case Token: return r.token;
        case Operator: return r.source.isEmpty() ? r.operatorName : u"%1 (%2)"_s.arg(r.operatorName, r.source);
        case Adjustment: return adjustmentText(r);
        default: return {};
        }
    }
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
        case Id: case Bucket: case DeltaAvailable: case DeltaLocked: case DeltaSold: case After:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        default:
            return int(Qt::AlignLeft | Qt::AlignVCenter);
        }
    }
    if (role == Qt::ToolTipRole && index.column() == At)
        return ConsoleText::localHint(r.atMs);
    if (role == Qt::ToolTipRole && index.column() == After)
        return tr("Bucket after this row: available / locked / sold (before: %1 / %2 / %3)")
            .arg(r.before.available).arg(r.before.locked).arg(r.before.sold);
    return {};
}

QVariant LedgerModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == ExportRole && section == After)
        return QStringList{tr("After available"), tr("After locked"), tr("After sold")};
    if (orientation == Qt::Horizontal && role == ExportRole && section == Adjustment)
        return QStringList{tr("Adjustment kind"), tr("Adjustment units"), tr("Discrepancy"), tr("Reason")};
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Id: return tr("Row");
    case At: return tr("At");
    case Order: return tr("Order");
    case Operation: return tr("Operation");
    case Sku: return tr("SKU");
    case Bucket: return tr("Bucket");
    case DeltaAvailable: return tr("Δ avail.");
    case DeltaLocked: return tr("Δ locked");
    case DeltaSold: return tr("Δ sold");
    case After: return tr("After (a / l / s)");
    case Token: return tr("Token");
    case Operator: return tr("Operator");
    case Adjustment: return tr("Adjustment (units, discrepancy, reason)");
    default: return {};
    }
}

void LedgerModel::setRows(const QList<LedgerRow> &rows, RowOrder order)
{
    beginResetModel();
    m_rows = rows;
    if (order == RowOrder::NewestFirst)
        std::sort(m_rows.begin(), m_rows.end(), [](const LedgerRow &a, const LedgerRow &b) { return a.id > b.id; });
    endResetModel();
}

} // namespace flashstock
