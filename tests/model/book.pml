/* The book's transactions. Each SQL transaction is one atomic step: its rows are locked
 * and written together and become visible together at COMMIT. The reserve's transaction
 * can fail (DBFAIL): rolled back, or committed with the COMMIT's reply lost, so the engine
 * sees an error either way (the drill's db-error seam is the first kind; a connection
 * lost at COMMIT the second). For confirm and release a failure is no new behaviour: a
 * rolled-back one is a crash before it (the provider redelivers), a lost COMMIT reply a
 * crash right after it (the engine skips the gate call), and both are in the model. */

/* dbk := 0 ok, 1 rolled back, 2 committed but the caller sees an error (for the reserve:
 * outcome_unknown, Book::reserveBatch's replay could not tell). */
inline db_fault(dbk) {
  dbk = 0;
  if
  :: FAULT(DBFAIL) -> n_fault++; dbk = 1
  :: FAULT(DBFAIL) -> n_fault++; dbk = 2
  :: skip
  fi
}

/* Book::reserve: INSERT order ON CONFLICT DO NOTHING (an existing order answers from its
 * rows), guarded UPDATE of the bucket (sql::reserveBucket), order line with the token,
 * ledger RESERVE. bres: B_*; stored: the token the book holds for the order. */
#define B_RESERVED  1
#define B_OOS       2
#define B_DUPLICATE 3
#define B_FENCED    4
#define B_ERROR     5
#define B_UNKNOWN   6       /* outcome_unknown: the COMMIT's reply lost, the replay could not tell */
inline book_reserve(o, tok, bres, stored, dbk) {
  db_fault(dbk);
  if
  :: dbk == 1 -> bres = B_ERROR
  :: else ->
     if
     :: o_status[o] == S_NONE || (o_status[o] == S_ABANDONED && (fenced & BIT(tok)) == 0) ->
        /* a new order, or a fenced one taken over by an attempt no fence holds
         * (Book::takeOverFenced): PENDING with this attempt's token */
        if
        :: b_avail >= 1 ->
           b_avail--; b_locked++;
           o_status[o] = S_PENDING; o_token[o] = tok;
           bres = B_RESERVED; stored = tok
        :: else -> bres = B_OOS
        fi
     :: o_status[o] == S_ABANDONED && (fenced & BIT(tok)) != 0 -> bres = B_FENCED
     :: o_status[o] == S_PENDING || o_status[o] == S_PAID -> bres = B_RESERVED; stored = o_token[o]
     :: o_status[o] == S_CLOSED -> bres = B_DUPLICATE; stored = o_token[o]   /* ReserveResult::heldTokens */
     fi;
     if
     :: dbk == 2 -> bres = B_UNKNOWN      /* the replay that answers from the rows is the no-fault case */
     :: else -> skip
     fi
  fi
}

/* Book::finishOrder's outcomes. */
#define F_PAID           1
#define F_DUP            2
#define F_REFUND         3
#define F_RELEASED       4
#define F_ALREADY_CLOSED 5
#define F_ALREADY_PAID   6
#define F_ERROR          7

/* Book::confirm -> finishOrder(pay): CAS PENDING->PAID with locked -= 1, sold += 1
 * (sql::confirmBucket, guard locked >= qty); the same payment again: duplicate; a closed
 * order: INSERT refund ON CONFLICT (order, payment) DO NOTHING. The CAS on (status,
 * version) retries the whole transaction when another one changed the order first, so
 * the transaction acts atomically at its CAS. */
inline book_confirm(o, fres, dbk) {
  dbk = 0;
  if
  :: dbk == 1 -> fres = F_ERROR
  :: else ->
     if
     :: o_status[o] == S_PENDING ->
        if
        :: b_locked >= 1 -> o_status[o] = S_PAID; b_locked--; b_sold++; fres = F_PAID
        :: else -> fres = F_ERROR          /* "book inconsistent": rolled back */
        fi
     :: o_status[o] == S_PAID -> fres = F_DUP
     :: o_status[o] == S_CLOSED || o_status[o] == S_ABANDONED ->
        if
        :: o_refunds[o] == 0 -> o_refunds[o] = 1
        :: else -> skip
        fi;
        fres = F_REFUND
     :: o_status[o] == S_NONE -> fres = F_ERROR          /* unknown order: bad input */
     fi;
     if
     :: fres != F_ERROR -> o_paycb[o] = 1
     :: else -> skip
     fi;
     if
     :: dbk == 2 -> fres = F_ERROR
     :: else -> skip
     fi
  fi
}

/* Book::release / Book::expire -> finishOrder(release): the write half. `seen` is the
 * status the transaction read. With the CAS (plain model) the write happens only if the
 * order is still PENDING; MUTANT_RELEASE_NOCAS writes on what it read before. */
inline book_release_write(o, seen, fres, dbk) {
  dbk = 0;
  if
  :: dbk == 1 -> fres = F_ERROR
  :: else ->
     if
#ifdef MUTANT_RELEASE_NOCAS
     :: seen == S_PENDING ->                /* UPDATE orders SET status='CLOSED' WHERE order_id=? */
#else
     :: seen == S_PENDING && o_status[o] == S_PENDING ->
#endif
        if
        :: b_locked >= 1 -> o_status[o] = S_CLOSED; o_due[o] = 1; b_locked--; b_avail++; fres = F_RELEASED
        :: else -> fres = F_ERROR          /* guard locked >= qty failed: rolled back */
        fi
     :: else ->
        if
        :: o_status[o] == S_PAID -> fres = F_ALREADY_PAID
        :: o_status[o] == S_CLOSED || o_status[o] == S_ABANDONED -> fres = F_ALREADY_CLOSED
        :: else -> fres = F_ERROR
        fi
     fi;
     if
     :: dbk == 2 -> fres = F_ERROR
     :: else -> skip
     fi
  fi
}

/* Book::fenceOrder: INSERT the order as ABANDONED ON CONFLICT DO NOTHING and, while it is
 * ABANDONED, record token t as fenced (one transaction). */
inline book_fence(o, t) {
  if
  :: o_status[o] == S_NONE || o_status[o] == S_ABANDONED -> o_status[o] = S_ABANDONED; fenced = fenced | BIT(t)
  :: else -> skip
  fi
}
