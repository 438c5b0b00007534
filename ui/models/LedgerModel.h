#pragma once

#include "Domain.h"

#include <QAbstractTableModel>

namespace flashstock {

/// Ledger rows, in the order set (the book returns them oldest first). GUI thread; fed by
/// setRows(). RawRole gives ids, units and ms; times are shown in UTC (ConsoleText).
class LedgerModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, At, Order, Operation, Sku, Bucket, DeltaAvailable, DeltaLocked, DeltaSold, After, Token,
                  Operator, Adjustment, ColumnCount };

    explicit LedgerModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// How setRows() orders the rows it is given (oldest first, as the book returns them).
    enum class RowOrder { AsGiven, NewestFirst };
    void setRows(const QList<LedgerRow> &rows, RowOrder order = RowOrder::AsGiven);
    const QList<LedgerRow> &rows() const { return m_rows; }

private:
    QList<LedgerRow> m_rows;
};

} // namespace flashstock
