#pragma once

#include "store/Book.h"

#include <QHash>

namespace flashstock {

/// THE BROKEN RESERVE, ON PURPOSE (tests and the drill's broken-engine rehearsal only;
/// install it with Book::setLineTakerForTesting): the read-check-write mistake of
/// NaiveDeduct inside the book. Each line's preferred bucket is read before the
/// transaction; inside it the figure computed from that read is written back
/// (`available = read - qty`, `locked = locked + qty`, total recomputed from them so the
/// row's CHECK passes; no guard in the WHERE clause, no borrow, no split). Concurrent
/// reserves then lose updates, units appear out of nothing and sold passes the stock:
/// oversell that the drill must catch. One per Book (it keeps what it read); its thread.
class NaiveReserve : public LineTaker {
public:
    [[nodiscard]] Result<void> beforeTransaction(Database &db, const QString &order, const OrderLine &line,
                                                 int buckets) override;
    [[nodiscard]] Result<QList<BucketTake>> take(Database &db, const QString &order, const OrderLine &line,
                                                 int buckets) override;

private:
    QHash<QString, qint64> m_read; ///< SKU -> available read before the transaction
};

} // namespace flashstock
