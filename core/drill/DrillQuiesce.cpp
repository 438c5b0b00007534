#include "drill/DrillQuiesce.h"

#include "reconcile/Reconciler.h"

namespace flashstock {

Result<QuiesceSummary> reconcileToQuiescence(Engine &engine, int maxPasses)
{
    QuiesceSummary summary;
    Reconciler reconciler(engine);
    while (summary.passes < maxPasses) {
        auto pass = reconciler.runPass(0);
        if (!pass)
            return std::unexpected(pass.error());
        ++summary.passes;
        for (const Discrepancy &d : pass->discrepancies)
            ++summary.byKind[discrepancyKindName(d.kind)];
        summary.autoFixed += pass->autoFixed;
        summary.pendingApproval += pass->pendingApproval;
        summary.stillPending = pass->stillPending;
        // At least two passes: the second proves the first left nothing behind.
        if (pass->discrepancies.isEmpty() && summary.passes >= 2) {
            summary.quiet = true;
            break;
        }
    }
    return summary;
}

} // namespace flashstock
