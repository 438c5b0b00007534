#pragma once

#include "Engine.h"

#include <memory>
#include <optional>

namespace flashstock::test {

/// Opens an Engine on `db` (book-only when `redis` is nullopt) as operator "tester",
/// source "test"; nullptr (with a warning) if it cannot.
std::unique_ptr<Engine> openEngine(const DbUrl &db, const std::optional<RedisUrl> &redis = std::nullopt);

/// I1-I4 and I6 over the whole book; prints every problem found. False if any fails.
bool bookHolds(Engine &engine);

} // namespace flashstock::test
