/* Faults: actor crashes (CRASHPOINT, at the start of any step that follows one with an
 * effect: a crash between two reads is the same state as a crash before the next write),
 * Redis losing its data, the stock key evicted, the script cache flushed. Budgets in
 * config.pml. */

/* A crash of the running actor before this step: its local state is gone; the label
 * `crashed` of each proctype says what comes next (a client retry, the next pass). */
#define CRASHPOINT \
  if \
  :: FAULT(CRASH) -> n_fault++; goto crashed \
  :: skip \
  fi

/* Redis restarts without persistence (an external server run with --save '' and no AOF,
 * or a failover to a replica that lacked the writes): every fs:{sku}:* key is gone.
 * Token ids stay unique (reserve-2.lua builds them from TIME). The script cache is gone
 * too; what that can do is the FLUSH fault's, counted there. In-flight calls that meet
 * the restart fail or lose their reply: crashes of their callers at that point. */
inline redis_data_loss(k) {
  g_stock = ABSENT; g_paused = 0; g_nheld = 0; g_lost = 1;
  k = 1;
  do
  :: k <= NTOK -> t_state[k] = T_NONE; k++
  :: else -> break
  od;
  k = 0;
  do
  :: k < NORD -> g_map[k] = 0; k++
  :: else -> break
  od;
  k = 0
}

/* step: fault.redis-data-loss  code: core/drill/DrillGateFaults.cpp DrillGateFaults::restart */
/* step: fault.stock-key-evicted  code: lua/reserve-2.lua */
/* step: fault.script-flush  code: core/drill/DrillGateFaults.cpp DrillGateFaults::flushScripts -> core/gate/GateRouter.cpp GateRouter::receive */
proctype Chaos() {
  byte k;
  do
  :: FAULT(LOSS) -> d_step { n_fault++; redis_data_loss(k) }
  :: FAULT(EVICT) -> atomic { n_fault++; g_stock = ABSENT }
  :: FAULT(FLUSH) -> atomic { n_fault++; g_noscript = 1 }
  :: break
  od
}

#ifdef LIVENESS
/* Abstract Redis time for the reconciler's grace: any open token may grow older than the
 * grace at any moment, and stays old. Weak fairness makes every token old eventually. */
#define YOUNG(t) ((oldmask & BIT(t)) == 0)
#define OLD(t)   ((oldmask & BIT(t)) != 0)
#define AGE(k) :: atomic { (k) <= NTOK && OPEN(k) && YOUNG(k) -> oldmask = oldmask | BIT(k) }
proctype Clock() {
end:
  do
  AGE(1) AGE(2) AGE(3) AGE(4) AGE(5) AGE(6) AGE(7) AGE(8)
  AGE(9) AGE(10) AGE(11) AGE(12)
  od
}
#else
/* Safety runs: the grace check may answer either way for any token at any time (a
 * superset of every real timing, including a grace shorter than a reserve). */
#define YOUNG(t) true
#define OLD(t)   true
#endif
