#pragma once

#include "ConsoleTypes.h"

#include <QAbstractTableModel>
#include <QHash>

namespace flashstock {

/// Current levels of every SKU, book and gate side by side, from the latest live sample.
/// GUI thread; fed by setSamples(). RawRole gives the numbers (-1 for no gate figure).
class SkuLevelsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Sku, Available, GateAvailable, Drift, Locked, Sold, Total, TakenRate, RefusedRate, ColumnCount };

    explicit SkuLevelsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Replaces the rows; `rates` by SKU (see LiveView::rates()). RawRole of RefusedRate is
    /// -1 where the refusals are not counted (no gate figure).
    void setSamples(const QList<SkuSample> &samples, const QHash<QString, SkuRates> &rates = {});
    const QList<SkuSample> &samples() const { return m_rows; }

private:
    QVariant raw(const SkuSample &s, int column) const;

    QList<SkuSample> m_rows;
    QHash<QString, SkuRates> m_rates;
};

} // namespace flashstock
