#pragma once

#include "ConsoleTypes.h"

#include <QAbstractTableModel>
#include <QHash>

namespace flashstock {

/// The flash sales, newest first, with the SKU's progress for each SKU's latest sale.
/// GUI thread; fed by setSales() from each live sample. RawRole gives ids, units and ms.
class SalesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Sku, Units, Window, Hold, Limit, Status, SoldPercent, ReserveRate, RejectRate, ColumnCount };

    explicit SalesModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Replaces the rows. `levels`: the SKUs' current levels; `rates`: see LiveView::rates();
    /// `nowMs`: when sampled (a sale's window is judged then). The rates show on the open,
    /// latest sale of a SKU only. Times are shown in UTC (ConsoleText), local on hover.
    void setSales(const QList<Sale> &sales, const QList<SkuSample> &levels, const QHash<QString, SkuRates> &rates,
                  qint64 nowMs = 0);
    /// The sale on `row`, or nullptr.
    const Sale *saleAt(int row) const;

private:
    QVariant raw(int row, int column) const;

    QList<Sale> m_sales;
    QHash<QString, SkuSample> m_levels;
    QHash<QString, SkuRates> m_rates;
    QHash<QString, qint64> m_latestSaleOfSku;
    qint64 m_nowMs = 0;
};

} // namespace flashstock
