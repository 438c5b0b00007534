#pragma once

#include "Domain.h"

#include <QAbstractTableModel>

namespace flashstock {

/// One SKU's buckets (rows of the book), as the latest live sample has them. GUI thread;
/// fed by setBuckets(). RawRole gives the numbers.
class BucketLevelsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Bucket, Available, Locked, Sold, Total, ColumnCount };

    explicit BucketLevelsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Replaces the rows (in place when the buckets are the same, so the selection stays).
    void setBuckets(const QList<BucketLevels> &buckets);
    const QList<BucketLevels> &buckets() const { return m_rows; }

private:
    QList<BucketLevels> m_rows;
};

} // namespace flashstock
