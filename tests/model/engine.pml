/* The engine's flows (core/Engine.cpp): reserve through the gate, restore of a missing
 * stock key, confirm, release, expire, and an operator's gate rebuild. */

/* GateRestore::restore (restoreIfAbsent, rebuild). force = 0: a restore of a missing stock
 * key (load only if absent); force = 1: a rebuild (gate rebuild, the reconciler's level
 * heal): pause the SKU, load over the key. gf := 1 if it failed. sn: the tokens open at
 * the snapshot; bk: those finished then (the load's ZRANGEBYSCORE done from the
 * snapshot's TIME leaves them out), then also those the book held. Sale, per-user counts and counters are restored too; the
 * model has no sale. */
#define OPEN_BIT(k) (((k) <= NTOK && OPEN(k)) -> BIT(k) : 0)
#define LIVE_BIT(k) (((k) <= NTOK && LIVE(k)) -> BIT(k) : 0)
#define DONE_BIT(k) (((k) <= NTOK && (t_state[k] == T_RELEASED || t_state[k] == T_SOLD)) -> BIT(k) : 0)
#define TOKEN_MASK(F) (F(1) | F(2) | F(3) | F(4) | F(5) | F(6) | F(7) | F(8) | F(9) | F(10) | F(11) | F(12))
inline restore_gate(force, L, bk, sn, gf, moved) {
  gf = 0;
  if
  :: force ->
     /* step: restore.pause  code: core/GateRestore.cpp GateRestore::restore -> core/gate/Gate.cpp Gate::setPaused -> lua/set-paused-1.lua */
     atomic { CRASHPOINT; script_call(gf); if :: !gf -> g_paused = 1 :: else -> skip fi }
  :: else -> skip
  fi;
  if
  :: !gf ->
     /* The open tokens first, then the book (a token that opens after the snapshot is
      * netted out below: it is not among the booked ones). */
     /* step: restore.tokens  code: core/GateRestore.cpp GateRestore::restore -> core/gate/Gate.cpp Gate::openTokens -> lua/open-tokens-2.lua */
     atomic { script_call(gf); if :: !gf -> sn = TOKEN_MASK(OPEN_BIT); bk = TOKEN_MASK(DONE_BIT) :: else -> skip fi }
  :: else -> skip
  fi;
  if
  :: !gf ->
     /* Available and which of the snapshot's tokens live orders hold, in one transaction
      * (the SKU's buckets locked: no book step of the SKU commits meanwhile). */
     /* step: restore.levels  code: core/GateRestore.cpp GateRestore::restore -> core/store/BookReads.cpp Book::restoreView */
     atomic { L = b_avail; bk = bk | (sn & TOKEN_MASK(LIVE_BIT)); sn = 0 };
     /* The load, then the unpause (a rebuild's scope guard; a restore's "the book has no
      * pause"): one step with the crash between them kept. A rebuild unpauses after a
      * failed load too. */
     /* step: restore.load  code: core/GateRestore.cpp GateRestore::restore -> core/gate/Gate.cpp Gate::load -> lua/load-3.lua */
     /* step: restore.unpause  code: core/GateRestore.cpp GateRestore::restore -> core/gate/Gate.cpp Gate::setPaused -> lua/set-paused-1.lua */
     atomic {
       CRASHPOINT;
       script_call(gf);
       if :: !gf -> lua_load3(L, bk, force) :: else -> skip fi;
       L = 0; bk = 0;
       if
       :: force || !gf ->
          CRASHPOINT;
          script_call(moved);
          if :: !moved -> g_paused = 0 :: else -> skip fi;
          moved = 0
       :: else -> skip
       fi
     }
  :: gf && force ->
     /* the pause or the token read failed: a rebuild's scope guard still unpauses */
     atomic { bk = 0; sn = 0; CRASHPOINT; script_call(moved); if :: !moved -> g_paused = 0 :: else -> skip fi; moved = 0 }
  :: else -> bk = 0; sn = 0
  fi
}

/* One buyer's order o: Engine::reserve (one line of 1 unit), then what its shop and
 * payment provider do with it (by role, config.pml: pay once, pay twice, cancel, never
 * pay). A crash or a non-final answer (gate_unavailable, an error) may be followed by the
 * client's retry of the same order (orders in RETRY, MAXATT attempts in all). Every step
 * ends by naming the next one, so no step is only local. */
#define MAY(mask, o) ((((mask) >> (o)) & 1) == 1)
proctype Buyer(byte o) {
  byte att, tok, stored, L, npay, res, st, bres, fres, seen, dbk;
  short bk, sn;
  bit created, restored, gf, moved, chk, retry, phase;

start:
  /* step: reserve.gate  code: core/Engine.cpp Engine::passGate -> core/Engine.cpp Engine::judgeGateReply -> core/gate/Gate.cpp Gate::reserveBatch -> core/gate/Gate.cpp Gate::Private::reserves -> lua/reserve-2.lua */
  atomic {
    if
    :: !restored -> att++
    :: else -> skip
    fi;
    script_call(gf);
    if
    :: gf -> res = G_UNAVAIL
    :: else -> lua_reserve2(o, res, tok, st)
    fi;
    gf = 0;
    if
    :: res == G_NOKEY && !restored -> res = 0; restored = 1; goto restore
    :: res == G_RESERVED -> created = 1; res = 0; st = 0; goto book
    :: res == G_EXISTING && st == T_HELD -> res = 0; st = 0; goto book   /* complete a first attempt */
    :: res == G_EXISTING && st != T_HELD -> chk = 1; res = 0; st = 0; goto book
    :: res == G_OOS || res == G_PAUSED -> goto finish                    /* out_of_stock, paused */
    :: else -> goto failed          /* gate_unavailable; the key missing even after a reload */
    fi
  }

restore:
  /* step: restore.once  code: core/GateRestore.cpp GateRestore::restoreOnce -> core/gate/Gate.cpp Gate::claimRestore */
  /* The claim only decides who restores and who waits (at most 5 s) for the key; either
   * may happen here, and a restore is only-if-absent. */
  if
  :: g_stock != ABSENT -> goto start
  :: true -> skip
  fi;
  restore_gate(0, L, bk, sn, gf, moved);
  if
  :: gf -> gf = 0; goto failed
  :: else -> goto start
  fi;

book:
#ifdef MUTANT_SETTLE_BEFORE_COMMIT
  /* MUTANT: the token is settled before the book has committed its order. */
  /* step: mutant.settle-before-commit  code: none (the mutant; today's code settles in reserve.settle) */
  atomic { CRASHPOINT; script_call(gf); if :: !gf -> lua_settle2(tok) :: else -> skip fi; gf = 0 }
#endif
  /* A token past held (EXISTING): Book::orderStatus first; no order in the book means
   * the token was given back or belongs to another book: "use a new order id". The read
   * only decides whether the transaction runs, so it is folded into it. */
  /* step: reserve.existing-status  code: core/Engine.cpp Engine::checkExistingToken -> core/store/BookReads.cpp Book::orderStatus */
  /* A batch's new one-line orders (SQLite and PostgreSQL) go through Book::reserveGrouped
   * instead (one guarded UPDATE per bucket for their total, then their rows, in the batch's
   * one transaction): the same steps, committed together, which is one of the
   * interleavings checked here. */
  /* step: reserve.book  code: core/store/BookBatch.cpp Book::reserveOrders -> core/store/BookBatch.cpp Book::reserveOne -> core/store/BookBatch.cpp Book::takeOverFenced -> core/store/BookBatch.cpp Book::reserveGrouped -> core/store/BookSql.cpp sql::insertOrder -> core/store/BookSql.cpp sql::reserveBucket */
  atomic {
    CRASHPOINT;
    if
    :: chk && o_status[o] == S_NONE -> goto finish
    :: else -> chk = 0
    fi;
    book_reserve(o, tok, bres, stored, dbk);
    dbk = 0;
    if
    :: bres == B_RESERVED ->
       bres = 0;
       if
       :: created && stored != tok -> goto extra
       :: else -> goto settle
       fi
    :: bres == B_UNKNOWN -> bres = 0; goto failed    /* Engine::applyBook: the tokens stay held for the reconciler (or the server's own resolver, the same step) */
    :: bres == B_ERROR -> bres = 0; retry = 1;
       if
       :: created -> goto giveback
       :: else -> goto failed
       fi
    :: else -> bres = 0;                                   /* out_of_stock, duplicate, fenced */
       if
       :: created && stored != tok -> goto giveback
       :: else -> goto finish   /* a token the order of this id holds is that order's */
       fi
    fi
  }

giveback:
  /* step: reserve.giveback  code: core/Engine.cpp Engine::applyBooks -> core/Engine.cpp Engine::releaseTokens -> core/gate/Gate.cpp Gate::release -> lua/release-3.lua */
  atomic {
    CRASHPOINT;
    script_call(gf);
    if :: !gf -> lua_release3(tok, moved) :: else -> skip fi;
    gf = 0; moved = 0;
    if
    :: retry -> retry = 0; goto failed
    :: else -> goto finish
    fi
  }

extra:
  /* A repeat whose gate mapping was lost: the token this call created is extra. */
  /* step: reserve.release-extra  code: core/Engine.cpp Engine::releaseExtra -> core/Engine.cpp Engine::releaseTokens -> core/gate/Gate.cpp Gate::release -> lua/release-3.lua */
  atomic {
    CRASHPOINT;
    script_call(gf);
    if :: !gf -> lua_release3(tok, moved) :: else -> skip fi;
    gf = 0; moved = 0;
    goto settle
  }

settle:
  /* step: reserve.settle  code: core/Engine.cpp Engine::settleBooked -> core/gate/Gate.cpp Gate::settlePipeline -> lua/settle-2.lua */
  atomic {
    CRASHPOINT;
#ifndef MUTANT_SETTLE_BEFORE_COMMIT
    script_call(gf);
    if :: !gf -> lua_settle2(stored) :: else -> skip fi;
    gf = 0;
#endif
    /* `reserved` is answered; now the shop and the payment provider. */
    tok = 0; stored = 0; created = 0; restored = 0; att = 0; L = 0; phase = 1;
    if
    :: MAY(PAY_NEVER, o) -> goto finish    /* lost callback: never paid, the hold expires */
    :: MAY(PAY_ONCE, o) -> npay = 1; goto pay   /* paid, now or late (any moment) */
    :: MAY(PAY_TWICE, o) -> npay = 2; goto pay  /* the same payment delivered twice */
    :: MAY(PAY_CANCEL, o) -> goto cancel   /* the buyer cancels */
    fi
  }

pay:
  /* Confirm, then mark the token sold. Nothing in the protocol reads the difference
   * between a PAID order's token settled and sold except the reconciler, which marks it
   * sold itself; so both are one step, with the crash between them kept. */
  /* step: confirm.book  code: core/Engine.cpp Engine::confirm -> core/store/Book.cpp Book::confirm -> core/store/BookBatch.cpp Book::finishOne -> core/store/BookSql.cpp sql::confirmBucket */
  /* step: confirm.mark-sold  code: core/Engine.cpp Engine::confirm -> core/gate/Gate.cpp Gate::markSold -> lua/mark-sold-3.lua */
  atomic {
    CRASHPOINT;
    book_confirm(o, fres, dbk);
    dbk = 0;
    npay--;
    if
    :: fres == F_PAID || fres == F_DUP ->
       fres = 0;
       CRASHPOINT;
       script_call(gf);
       if :: !gf -> lua_marksold3(o_token[o]) :: else -> skip fi;
       gf = 0
    :: else -> fres = 0
    fi;
    if
    :: npay > 0 -> goto pay                /* the provider delivers it again */
    :: else -> goto finish
    fi
  }

cancel:
  /* Release, then give the token back. The window between them is the expiry's too
   * (expire.book, expire.gate), which keeps it a window; here both are one step, with
   * the crash between them kept. */
#ifdef MUTANT_RELEASE_NOCAS
  /* step: release.read  code: core/store/BookBatch.cpp Book::finishOne */
  atomic { seen = o_status[o] }
  atomic {
    CRASHPOINT;
#else
  /* step: release.book  code: core/Engine.cpp Engine::release -> core/store/Book.cpp Book::release -> core/store/BookBatch.cpp Book::finishOne -> core/store/BookSql.cpp sql::releaseBucket */
  /* step: release.gate  code: core/Engine.cpp Engine::release -> core/Engine.cpp Engine::giveBackReleased -> core/Engine.cpp Engine::releaseTokens -> core/gate/Gate.cpp Gate::release -> lua/release-3.lua */
  /* step: release.record  code: core/Engine.cpp Engine::giveBackReleased -> core/store/Book.cpp Book::gateReleased */
  atomic {
    CRASHPOINT;
    seen = o_status[o];
#endif
    book_release_write(o, seen, fres, dbk);
    dbk = 0; seen = 0;
    if
    :: fres == F_RELEASED || fres == F_ALREADY_CLOSED ->
       fres = 0;
       CRASHPOINT;
       script_call(gf);
       if
       :: !gf -> lua_release3(o_token[o], moved);
          /* The gate took the units back: the book's gate_release_due flag is cleared.
           * Only the expirer reads it, and a release it repeats in between is idempotent,
           * so the record is folded into this step, with the crash before it kept. */
          CRASHPOINT;
          o_due[o] = 0
       :: else -> skip
       fi;
       gf = 0; moved = 0
    :: else -> fres = 0
    fi;
    goto finish
  }

crashed:
failed:
  /* A crash, gate_unavailable or an error: the provider redelivers a payment it has not
   * had acknowledged; a client may send the same reserve again. */
  if
  :: phase && npay > 0 -> goto pay
  :: phase -> goto finish
  :: !phase && att < MAXATT && MAY(RETRY, o) ->
     tok = 0; stored = 0; created = 0; restored = 0; chk = 0; retry = 0; L = 0; goto start
  :: !phase -> goto finish
  fi;

finish:
  att = 0; tok = 0; stored = 0; L = 0; npay = 0; res = 0; st = 0; bres = 0; fres = 0;
  seen = 0; dbk = 0; created = 0; restored = 0; gf = 0; moved = 0; chk = 0; retry = 0; phase = 0
}

/* The expiry job (Engine::expire): Book::expire closes due orders, each in its own
 * transaction, and the engine gives each one's tokens back as it commits, then records
 * that in the book (Book::gateReleased); then the orders the book still has marked
 * gate_release_due (a release or expiry whose gate step failed or was cut short) get
 * theirs back the same way. A hold may end at any moment after its commit (abstract
 * time), so any PENDING order may be due. */
#define PICK(k) :: (k) < NORD && o_status[k] == S_PENDING -> o = k
#define PICKDUE(k) :: (k) < NORD && o_due[k] -> o = k
proctype Expirer() {
  byte o, seen, fres, dbk;
  bit gf, moved;
endloop:   /* an end label: the job waits here for due orders */
  if
  :: /* step: expire.book  code: core/Engine.cpp Engine::expire -> core/store/BookBatch.cpp Book::expire -> core/store/BookBatch.cpp Book::finishOne -> core/store/BookSql.cpp sql::releaseBucket */
     atomic {
       if
       PICK(0) PICK(1) PICK(2) PICK(3) PICK(4) PICK(5)
       fi;
#ifdef MUTANT_RELEASE_NOCAS
       seen = o_status[o]
     }
     atomic {
#else
       seen = o_status[o];
#endif
       book_release_write(o, seen, fres, dbk);
       dbk = 0; seen = 0;
       if
       :: fres != F_RELEASED -> fres = 0; o = 0; goto endloop
       :: else -> fres = 0
       fi
     }
  :: /* step: expire.due  code: core/Engine.cpp Engine::expire -> core/store/Book.cpp Book::gateReleasesDue */
     atomic {
       if
       PICKDUE(0) PICKDUE(1) PICKDUE(2) PICKDUE(3) PICKDUE(4) PICKDUE(5)
       fi
     }
  fi;
  /* The release, then the record (folded as in release.gate, the crash between kept). */
  /* step: expire.gate  code: core/Engine.cpp Engine::giveBackReleased -> core/Engine.cpp Engine::releaseTokens -> core/gate/Gate.cpp Gate::release -> lua/release-3.lua */
  /* step: expire.record  code: core/Engine.cpp Engine::giveBackReleased -> core/store/Book.cpp Book::gateReleased */
  atomic {
    CRASHPOINT;
    script_call(gf);
    if
    :: !gf -> lua_release3(o_token[o], moved); CRASHPOINT; o_due[o] = 0
    :: else -> skip
    fi;
    gf = 0; moved = 0; o = 0;
    goto endloop
  }
crashed:
  o = 0;
  goto endloop
}

/* An operator's `gate rebuild SKU` (Engine::rebuildGate), once, at any moment. */
proctype Operator() {
  byte L;
  short bk, sn;
  bit gf, moved;
  /* step: rebuild.operator  code: core/Engine.cpp Engine::rebuildGate -> core/GateRestore.cpp GateRestore::rebuild */
  restore_gate(1, L, bk, sn, gf, moved);
crashed:
  skip
}
