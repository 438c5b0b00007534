#pragma once

#include "Engine.h"
#include "reconcile/Reconciler.h"
#include "support/BookFixture.h"
#include "support/RedisFixture.h"

#include <memory>
#include <optional>

namespace flashstock::test {

/// Opens an Engine on `db` (book-only when `redis` is nullopt) as operator "tester",
/// source "test"; nullptr (with a warning) if it cannot.
std::unique_ptr<Engine> openEngine(const DbUrl &db, const std::optional<RedisUrl> &redis = std::nullopt);

/// I1-I4 and I6 over the whole book; prints every problem found. False if any fails.
bool bookHolds(Engine &engine);

/// A decision by `who` (as asserted) from this process: its OS user and host.
DecisionBy by(const QString &who);
/// A decision by `who` from host `host` as OS user `who`: another person than this
/// process's, as an approver at another machine would be.
DecisionBy byAt(const QString &who, const QString &host);
/// Approves discrepancy `id` on the correction it proposes now (what `discrepancy show`
/// shows), as an approver who has just read it.
Result<Discrepancy> approveAsShown(Reconciler &reconciler, qint64 id, const DecisionBy &by, const QString &reason,
                                   const QStringList &seedApprovers);

/// How many of `warnings` are of `kind` (and of `sku`, when given).
int countWarnings(const WarningRing &warnings, WarningKind kind, const QString &sku = {});

} // namespace flashstock::test

/// In a test function: a fresh book of `backend` (skipped or failed as FS_FRESH_BOOK), a
/// redis-server of its own (required as FLASHSTOCK_REQUIRE_REDIS_SERVER) and an engine on
/// both. Declares `fresh`, `redis` and `engine`.
#define FS_GATED_ENGINE(backend)                                                                                 \
    FLASHSTOCK_REQUIRE_REDIS_SERVER();                                                                           \
    FS_FRESH_BOOK(fresh, backend);                                                                               \
    flashstock::RedisFixture redis;                                                                              \
    QVERIFY2(redis.start(), qPrintable(redis.errorString()));                                                    \
    auto engine = flashstock::test::openEngine(fresh.url(), redis.url());                                        \
    QVERIFY(engine)
