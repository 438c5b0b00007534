#pragma once

#include <QString>

namespace flashstock::sql {

// The statements of the book's hot path, shared by Book and by the benchmark that runs
// them bare (without the engine around them) to measure the engine's overhead.
// `now` is Database::nowMsExpr(). Binds are positional, in the order given.

/// INSERT a PENDING order, skipped if the id exists. Binds: order, user, hold ms.
/// Returns expires_at when inserted, no row when the order existed.
QString insertOrder(const QString &now);
/// Guarded reserve of one bucket: available -> locked only if `available >= qty`.
/// Binds: qty, qty, sku, bucket, qty. Returns the levels after, no row when short.
QString reserveBucket();
/// Guarded confirm: locked -> sold only if `locked >= qty`. Binds as reserveBucket.
QString confirmBucket();
/// Guarded release: locked -> available only if `locked >= qty`. Binds as reserveBucket.
QString releaseBucket();
/// INSERT an order line. Binds: order, sku, bucket, qty, token.
QString insertOrderLine();
/// INSERT a ledger row. Binds: order, operation, sku, bucket, token, three deltas, the
/// levels before (3) and after (3), operator, source.
QString insertLedger(const QString &now);

} // namespace flashstock::sql
