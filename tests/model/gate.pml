/* The gate's Lua scripts. Each runs atomically in Redis, so each inline is called inside
 * one atomic step of its caller.
 *
 * SCRIPT FLUSH at the protocol level: EVALSHA then answers NOSCRIPT, which means the
 * script did not run; GateRouter::receive loads every script and sends the call again
 * (then EVAL, which cannot meet NOSCRIPT). So the next script call after a flush either
 * runs once, as if nothing happened, or, when the reload itself fails, does not run and
 * answers Unavailable: a call that did nothing. That is all a flush can do, and it is what
 * script_call models (one such call per flush; more failures are more flushes). */

/* gf := 1 if this script call does not run (its caller sees Unavailable). */
inline script_call(gf) {
  gf = 0;
  if
  :: g_noscript -> g_noscript = 0;
     if
     :: skip                                   /* SCRIPT LOAD of all, EVALSHA again: it runs */
     :: gf = 1                                 /* the reload failed: nothing ran */
     fi
  :: else -> skip
  fi
}

/* reserve-2.lua. res: G_* below; tok: the token; st: its state (EXISTING: held, settled
 * or sold; a released token is a dead attempt, and the order gets a fresh one). */
#define G_RESERVED 1
#define G_EXISTING 2
#define G_OOS      3
#define G_PAUSED   4
#define G_NOKEY    5
#define G_UNAVAIL  6
inline lua_reserve2(o, res, tok, st) {
  if
  :: g_map[o] != 0 && t_state[g_map[o]] != T_NONE && t_state[g_map[o]] != T_RELEASED ->
     res = G_EXISTING; tok = g_map[o]; st = t_state[tok]
  :: else ->
     if
     :: g_paused -> res = G_PAUSED
     :: else ->
        if
        :: g_stock == ABSENT -> res = G_NOKEY
        :: else ->
           if
           :: g_stock < 1 -> res = G_OOS
           :: else ->
              assert(o_ngen[o] < TG);
              g_stock--;
              tok = o * TG + o_ngen[o] + 1;
              o_ngen[o]++;
              t_state[tok] = T_HELD;
              g_nheld++;
              g_map[o] = tok;
              res = G_RESERVED; st = T_HELD
           fi
        fi
     fi
  fi
}

/* settle-2.lua: held -> settled. */
inline lua_settle2(t) {
  if
  :: t_state[t] == T_HELD -> t_state[t] = T_SETTLED; g_nheld--
  :: else -> skip                         /* settled/sold: 0; released: -10; unknown: -6 */
  fi
}

/* mark-sold-3.lua: held or settled -> sold. */
inline lua_marksold3(t) {
  if
  :: t_state[t] == T_HELD -> t_state[t] = T_SOLD; g_nheld--
  :: t_state[t] == T_SETTLED -> t_state[t] = T_SOLD
  :: else -> skip
  fi
}

/* release-3.lua: held or settled -> released, units back unless the stock key is absent.
 * moved := 1 if this call released it. */
inline lua_release3(t, moved) {
  moved = 0;
  if
  :: t_state[t] == T_HELD || t_state[t] == T_SETTLED ->
     if
     :: t_state[t] == T_HELD -> g_nheld--
     :: else -> skip
     fi;
     t_state[t] = T_RELEASED;
     moved = 1;
     if
     :: g_stock != ABSENT -> g_stock++
     :: else -> skip                      /* 2 RELEASED_NO_KEY */
     fi
  :: else -> skip                         /* released/sold: 0 */
  fi
}

/* Units the load takes off: tokens held, settled or sold now and not in `bk` (a token
 * mask: those the book's live orders held at the read, and those already finished,
 * released or sold, at the token snapshot). */
#define COUNTED(k) (t_state[k] == T_HELD || t_state[k] == T_SETTLED || t_state[k] == T_SOLD)
#define NOT_BOOKED(k, bk) (((k) <= NTOK && COUNTED(k) && (bk & BIT(k)) == 0) -> 1 : 0)
#define UNBOOKED(bk) (NOT_BOOKED(1, bk) + NOT_BOOKED(2, bk) + NOT_BOOKED(3, bk) + NOT_BOOKED(4, bk) \
  + NOT_BOOKED(5, bk) + NOT_BOOKED(6, bk) + NOT_BOOKED(7, bk) + NOT_BOOKED(8, bk) + NOT_BOOKED(9, bk) \
  + NOT_BOOKED(10, bk) + NOT_BOOKED(11, bk) + NOT_BOOKED(12, bk))

/* load-3.lua: stock := max(0, L - UNBOOKED(bk)), if absent or forced. L is the book's
 * available and bk's booked part the tokens its live orders held, read together
 * (Book::restoreView): a booked token is in L already; any other token held, settled or
 * sold since the snapshot has its units in L and deducted in the gate (held: not booked
 * yet, or booked since the read; settled: released in the book, its gate release to come;
 * sold: booked and paid since the read). */
inline lua_load3(L, bk, force) {
  if
  :: force || g_stock == ABSENT ->
#if defined(MUTANT_RESTORE_NO_NET)
     g_stock = L;                         /* MUTANT: no token is netted out */
#elif defined(MUTANT_RESTORE_NETS_HELD)
     /* MUTANT (the protocol before the fix): net out the tokens held at the load. A token
      * that settles between the book read and the load is then counted twice. */
     if
     :: L > g_nheld -> g_stock = L - g_nheld
     :: else -> g_stock = 0
     fi;
#else
     if
     :: L > UNBOOKED(bk) -> g_stock = L - UNBOOKED(bk)
     :: else -> g_stock = 0
     fi;
#endif
#ifndef MUTANT_RESTORE_NETS_HELD
     /* L3, load-3.lua's contract: what it loads is the book's figure net of the units of
      * the tokens the book did not count (each unit counted once, in the book or as a
      * token). Checked only when this call wrote the key: a key already present was
      * loaded by someone else, from another reading of the book. (The nets-held mutant
      * is another contract; G3 shows what it does.) */
     if
     :: !(g_stock == 0 || g_stock + UNBOOKED(bk) <= L) ->
        printf("PROPERTY L3 violated\n"); assert(false)
     :: else -> skip
     fi
#endif
  :: else -> skip                         /* 0 PRESENT */
  fi
}
