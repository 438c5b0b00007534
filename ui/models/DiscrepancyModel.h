#pragma once

#include "reconcile/Reconciler.h"

#include <QAbstractTableModel>

namespace flashstock {

/// The reconciler's discrepancies, newest first, each with the level its Gate, Book and
/// Ledger figures count (Level). GUI thread; fed by setDiscrepancies().
/// RawRole gives ids, units, ms and the status/kind words (what the filters match); times
/// are shown in UTC (ConsoleText), local on hover. A pending one says what approving it
/// does by the book's four-eyes policy (setFourEyesUnits): one approval applies it, it
/// needs two, or its first approval is given (marked amber); "Resolved by" names both
/// approvers of a four-eyes approval.
class DiscrepancyModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Id, Kind, Sku, Level, Gate, Book, Ledger, Delta, Proposal, DetectedAt, Status, ResolvedBy, ResolvedAt,
        ColumnCount
    };

    explicit DiscrepancyModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Shows `list`. The same discrepancies in the same order keep their rows (and a view's
    /// selection and scroll): only the cells that changed are reported. True if the rows
    /// changed (a reset).
    bool setDiscrepancies(const QList<Discrepancy> &list);
    /// The book's four-eyes limit (units; -1 not known), for what approving says.
    void setFourEyesUnits(qint64 units);
    qint64 fourEyesUnits() const { return m_fourEyesUnits; }
    /// The discrepancy on `row`, or nullptr.
    const Discrepancy *at(int row) const;
    /// Row of discrepancy `id`, or -1.
    int rowOf(qint64 id) const;

    /// A kind or status word for people: the core's word with spaces (`ledger mismatch`).
    static QString kindText(DiscrepancyKind kind);
    static QString statusText(DiscrepancyStatus status);
    /// The level the Gate, Book and Ledger columns count, for people (`available`,
    /// `order's locked units`, ...); empty for none.
    static QString levelText(DiscrepancyLevel level);
    /// What approving pending `d` does, by the four-eyes limit `fourEyesUnits` (-1 not
    /// known): `first approval by alice at 2026-12-03 10:02 UTC, needs a second approver`,
    /// `needs two approvers (150 units)` or `one approval applies it`; empty when not pending.
    static QString approvalText(const Discrepancy &d, qint64 fourEyesUnits);

private:
    QList<Discrepancy> m_rows;
    qint64 m_fourEyesUnits = -1;
};

} // namespace flashstock
