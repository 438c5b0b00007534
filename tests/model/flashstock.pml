/* FlashStock protocol model: the Redis gate in front of the SQL book, as core/ runs it.
 *
 * One SKU with one bucket of TOTAL units; NORD buyers, one order of 1 unit each. Actors:
 * the buyers (reserve through the gate, book, settle; then pay, pay twice, cancel or
 * never pay), the expiry job, the reconciler (pass after pass), Redis faults (Chaos),
 * optionally an operator's gate rebuild, and in liveness runs the clock of the grace.
 * Each Lua script is one atomic step; each SQL transaction is one atomic step; nothing
 * else is atomic. Any actor may crash before any step that follows one with an effect.
 *
 * Every step carries a marker naming the code it stands for:
 *   / * step: ID  code: PATH SYMBOL [-> PATH SYMBOL]... * /
 * (PATH is relative to the repository root; a lua/ file has no symbol.)
 * tests/model/steps.txt lists them with a fingerprint of the code; scripts/model-steps.sh
 * (ctest model_steps) fails when the code changed, naming the step to look at. The crash
 * points run on the real engine in tests/tst_protocol_steps.cpp (one test per point). */

#include "config.pml"
#include "state.pml"
#include "faults.pml"
#include "gate.pml"
#include "book.pml"
#include "engine.pml"
#include "reconciler.pml"
#include "properties.pml"

init {
  byte k;
  atomic {
    k = 0;
    do
    :: k < NORD -> run Buyer(k); k++
    :: else -> break
    od;
    k = 0;
    do
    :: k < NDUP -> run Buyer(0); k++
    :: else -> break
    od;
#ifndef NOEXPIRE
    run Expirer();
#endif
    run Reconciler();
    run Chaos();
#if OPERATOR
    run Operator();
#endif
#ifdef LIVENESS
    run Clock();
#endif
    k = 0
  }
}
