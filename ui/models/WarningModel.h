#pragma once

#include "EngineWarning.h"

#include <QAbstractTableModel>

namespace flashstock {

/// The engine's recent warnings for the console, newest first, bounded like the engine's
/// own ring: at most `capacity` rows, the oldest dropped and counted. GUI thread; fed by
/// add() from EngineWorker::warned. RawRole gives ms since the epoch and the kind's name.
class WarningModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Time, Kind, Sku, Message, ColumnCount };
    /// Rows kept by default.
    static constexpr qsizetype kDefaultCapacity = 500;

    explicit WarningModel(qsizetype capacity = kDefaultCapacity, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : int(m_ring.size()); }
    int columnCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : ColumnCount; }
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Adds `warnings` (oldest first) and the count of older ones their sender dropped.
    void add(const QList<EngineWarning> &warnings, qint64 droppedBySender);
    /// Forgets every warning and the dropped count (the operator has read them).
    void clear();
    /// Warnings dropped (by the engine or here) since the last clear().
    qint64 dropped() const { return m_ring.dropped(); }
    /// The warning on `row` (0 = newest), or nullptr.
    const EngineWarning *at(int row) const;

signals:
    /// Rows or the dropped count changed (for the status bar's indicator).
    void countChanged();

private:
    WarningRing m_ring;
};

} // namespace flashstock
