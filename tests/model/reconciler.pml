/* The reconciler's gate half (Reconciler::runPass -> Reconciler::checkGates -> healTokens, healLevels), pass after
 * pass. The book half (checkBook: invariant checks held for approval) moves nothing and
 * is left out; the properties check the book directly. */


/* giveBack: the discrepancy row is recorded (no effect on stock), then release-3.lua. */
inline giveback(t, gf, moved) {
  script_call(gf);
  if
  :: !gf -> lua_release3(t, moved);
     if
     :: moved -> comp_mask = comp_mask | BIT(t)
     :: else -> skip
     fi
  :: else -> skip
  fi;
  gf = 0; moved = 0
}

/* What healTokens does with token t once it knows the order's status s and line token lt.
 * The read and the action are one step: every status acted on is final (ABANDONED,
 * CLOSED, another token) or the action only keeps books (settle, mark sold). */
inline act(t, s, lt, gf, moved) {
  if
  :: s == S_ABANDONED -> giveback(t, gf, moved)                  /* orphan_pre_deduct */
  :: s != S_ABANDONED && lt != t ->                               /* a repeat's extra token */
     if
     :: YOUNG(t) -> inflight = 1
     :: OLD(t) -> giveback(t, gf, moved)                          /* orphan_pre_deduct */
     fi
  :: s == S_CLOSED && lt == t -> giveback(t, gf, moved)           /* stale_hold */
  :: (s == S_PENDING || s == S_PAID) && lt == t ->               /* settle / mark-sold lost */
     if
     :: t_state[t] == T_HELD -> script_call(gf); if :: !gf -> lua_settle2(t) :: else -> skip fi
     :: else -> skip
     fi;
     if
     :: s == S_PAID -> script_call(gf); if :: !gf -> lua_marksold3(t) :: else -> skip fi
     :: else -> skip
     fi;
     gf = 0
  fi
}

/* healTokens' token loop for token t (in the snapshot): Book::orderOnSku; no order
 * and older than the grace: Book::fenceOrder, orderOnSku again; then act(). */
inline heal_token(t, s, lt, gf, moved) {
  s = o_status[ORD(t)]; lt = o_token[ORD(t)];
  if
  :: s == S_NONE || s == S_ABANDONED ->       /* no order, or one fenced for an earlier attempt */
     if
     :: YOUNG(t) -> inflight = 1                   /* younger than the grace: in flight */
#ifdef MUTANT_COMPENSATE_NO_FENCE
     :: OLD(t) -> giveback(t, gf, moved)           /* MUTANT: given back with no fence first */
#else
     :: OLD(t) ->
        book_fence(ORD(t), t);                     /* fence this attempt first: its reserve fails */
        s = o_status[ORD(t)]; lt = o_token[ORD(t)];
        act(t, s, lt, gf, moved)
#endif
     fi
  :: else -> act(t, s, lt, gf, moved)
  fi;
  s = 0; lt = 0
}

#define HEAL(k) \
  if \
  :: (k) <= NTOK && OPEN(k) -> heal_token(k, s, lt, gf, moved) \
  :: else -> skip \
  fi

proctype Reconciler() {
  byte s, lt, L;
  short bk, sn;
  bit inflight, gf, moved;

pass:
  s = 0; lt = 0; L = 0; inflight = 0; gf = 0; moved = 0;
  /* runPass first unpauses every SKU the book does not hold paused (none in the model: the
   * book is never disputed here), then healTokens reads the open tokens. Both are folded
   * into one step: each is idempotent and neither reads what the other writes. */
  /* The token loop is part of the same step: the snapshot of open tokens and, for each, the order's
   * status, the fence and the action. The fence (INSERT ... ON CONFLICT DO NOTHING) is
   * where a racing reserve and the reconciler are ordered; every other status acted on
   * is final (ABANDONED, CLOSED, another token) or the action only keeps books (settle,
   * mark sold); a crash part way through is a pass whose remaining tokens looked young.
   * What the one step leaves out is a reserve that gave its token back between the
   * snapshot and the reconciler's look at it: the reconciler fences that order too, and a
   * client retry of it is refused one way (fenced) instead of another ("use a new order id").
   * A server resolving the tokens of its own reserves of unknown outcome
   * (Reconciler::resolveTokens, each token by healToken with the safe grace) is this step
   * for some of the open tokens. */
  /* step: reconcile.unpause  code: core/reconcile/Reconciler.cpp Reconciler::checkGates -> core/gate/Gate.cpp Gate::setPaused -> lua/set-paused-1.lua */
  /* step: reconcile.tokens  code: core/reconcile/Reconciler.cpp Reconciler::healTokens -> core/gate/Gate.cpp Gate::openTokens -> lua/open-tokens-2.lua */
  /* step: reconcile.order-of  code: core/reconcile/Reconciler.cpp Reconciler::healTokens -> core/reconcile/Reconciler.cpp Reconciler::healToken -> core/store/BookReconcile.cpp Book::orderOnSku */
  /* step: reconcile.fence  code: core/reconcile/Reconciler.cpp Reconciler::healTokens -> core/reconcile/Reconciler.cpp Reconciler::healToken -> core/store/BookReconcile.cpp Book::fenceOrder */
  /* step: reconcile.giveback  code: core/reconcile/Reconciler.cpp Reconciler::giveBack -> core/store/DiscrepancyStore.cpp DiscrepancyStore::insert -> core/gate/Gate.cpp Gate::release -> lua/release-3.lua */
  /* step: reconcile.settle  code: core/reconcile/Reconciler.cpp Reconciler::healTokens -> core/reconcile/Reconciler.cpp Reconciler::healToken -> core/gate/Gate.cpp Gate::settle -> core/gate/Gate.cpp Gate::settlePipeline -> lua/settle-2.lua */
  /* step: reconcile.mark-sold  code: core/reconcile/Reconciler.cpp Reconciler::healTokens -> core/reconcile/Reconciler.cpp Reconciler::healToken -> core/gate/Gate.cpp Gate::markSold -> lua/mark-sold-3.lua */
  atomic {
    CRASHPOINT;
    script_call(gf);
    if :: !gf -> g_paused = 0 :: else -> skip fi;
    script_call(gf);
    if
    :: gf -> goto pass                 /* tokens not read: a warning, no heal this pass */
    :: else -> skip
    fi;
    HEAL(1); HEAL(2); HEAL(3); HEAL(4); HEAL(5); HEAL(6);
    HEAL(7); HEAL(8); HEAL(9); HEAL(10); HEAL(11); HEAL(12);
    if
    :: inflight -> goto pass           /* levels only with nothing in flight */
    :: else -> skip
    fi
  }
  /* Levels only when the book did not move meanwhile: book levels, gate available, open
   * tokens again (none held), book levels again; then a rebuild if they differ. The model
   * takes the four reads at one instant, after the token loop. Read at four instants they
   * can also see a difference that was never there at any one instant, and rebuild then:
   * an extra rebuild, no other effect; OPERATOR=1 runs have a rebuild at any moment. */
  /* step: reconcile.levels  code: core/reconcile/Reconciler.cpp Reconciler::healLevels -> core/store/BookReads.cpp Book::levels -> core/gate/Gate.cpp Gate::available -> core/gate/Gate.cpp Gate::openTokens -> lua/open-tokens-2.lua */
  atomic {
    script_call(gf);
    if
    :: gf || g_nheld > 0 || g_stock == ABSENT || g_stock == b_avail -> goto pass
    :: else -> skip
    fi
  }
  /* step: reconcile.rebuild  code: core/reconcile/Reconciler.cpp Reconciler::healLevels -> core/Engine.cpp Engine::rebuildGate -> core/GateRestore.cpp GateRestore::rebuild */
  restore_gate(1, L, bk, sn, gf, moved);
  goto pass;

crashed:
  goto pass
}
