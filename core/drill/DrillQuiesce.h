#pragma once

#include "Result.h"
#include "drill/DrillReport.h"

namespace flashstock {

class Engine;

/// The drill's one call into the reconciler (core/reconcile/Reconciler): passes with grace
/// 0 (nothing is in flight any more) until a pass finds nothing new (at least two passes),
/// at most `maxPasses`.
/// Errors: what the reconciler returned.
[[nodiscard]] Result<QuiesceSummary> reconcileToQuiescence(Engine &engine, int maxPasses);

} // namespace flashstock
