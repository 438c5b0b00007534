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
    enum Column { Sku, Available, GateAvailable, Drift, Locked, Sold, Total, Rate, ColumnCount };

    explicit SkuLevelsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Replaces the rows; `rates` are net units taken per second by SKU (see LiveView).
    void setSamples(const QList<SkuSample> &samples, const QHash<QString, double> &rates = {});
    const QList<SkuSample> &samples() const { return m_rows; }

private:
    QVariant raw(const SkuSample &s, int column) const;

    QList<SkuSample> m_rows;
    QHash<QString, double> m_rates;
};

} // namespace flashstock
