#pragma once

#include "ConsoleTypes.h"

#include <QAbstractTableModel>
#include <QHash>

namespace flashstock {

/// Current levels of every SKU, book and gate side by side, with the state of its sale, the
/// discrepancy that pauses it and its holds past expiry, from the latest live sample.
/// GUI thread; fed by setSamples(). RawRole gives the numbers (-1 for no gate figure), the
/// sale's status word (empty without a sale); samples() has the pausing discrepancies.
class SkuLevelsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Sku, SaleState, Available, GateAvailable, Drift, Locked, Sold, Total, Buckets, PastExpiry, TakenRate,
        RefusedRate, ColumnCount
    };

    explicit SkuLevelsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Replaces the rows; `rates` by SKU (see LiveView::rates()); `nowMs` is when they were
    /// sampled (a sale's window is judged then). RawRole of RefusedRate is -1 where the
    /// refusals are not counted (no gate figure).
    void setSamples(const QList<SkuSample> &samples, const QHash<QString, SkuRates> &rates = {}, qint64 nowMs = 0);
    const QList<SkuSample> &samples() const { return m_rows; }
    /// The row of `sku`, or -1.
    int rowOf(const QString &sku) const;

private:
    QVariant raw(const SkuSample &s, int column) const;
    QString saleText(const SkuSample &s) const;

    QList<SkuSample> m_rows;
    QHash<QString, SkuRates> m_rates;
    qint64 m_nowMs = 0;
};

} // namespace flashstock
