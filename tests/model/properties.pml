/* The properties. Safety properties are monitors: each one's process can move only in a
 * state that breaks it, and then fails its assertion (the trail names it). */

/* Sums and conjunctions over orders 0..NORD-1 and tokens 1..NTOK (at most 6 and 12). */
#define OSUM(F) (F(0) + F(1) + F(2) + F(3) + F(4) + F(5))
#define OALL(F) (F(0) && F(1) && F(2) && F(3) && F(4) && F(5))
#define TSUM(F) (F(1) + F(2) + F(3) + F(4) + F(5) + F(6) + F(7) + F(8) + F(9) + F(10) + F(11) + F(12))
#define TALL(F) (F(1) && F(2) && F(3) && F(4) && F(5) && F(6) && F(7) && F(8) && F(9) && F(10) && F(11) && F(12))

/* I1: never oversold in the book: no level negative, available + locked + sold = total. */
#define I1 (b_avail >= 0 && b_locked >= 0 && b_sold >= 0 && b_avail + b_locked + b_sold == TOTAL)

/* I4: sold = units of PAID orders, locked = units of PENDING orders (1 unit each). */
#define PAID_Q(k)    (((k) < NORD && o_status[k] == S_PAID) -> 1 : 0)
#define PENDING_Q(k) (((k) < NORD && o_status[k] == S_PENDING) -> 1 : 0)
#define I4 (b_sold == OSUM(PAID_Q) && b_locked == OSUM(PENDING_Q))

/* I6: the payment of an order that is closed (or fenced) has exactly one refund; a paid
 * order's own payment none. */
#define I6_O(k) ((k) >= NORD || (o_refunds[k] <= 1 \
                 && (!o_paycb[k] || !(o_status[k] == S_CLOSED || o_status[k] == S_ABANDONED) || o_refunds[k] == 1) \
                 && (o_status[k] != S_PAID || o_refunds[k] == 0)))
#define I6 OALL(I6_O)

/* C1: the reconciler's compensation is final: a token it gave back is never the token of
 * a PENDING or PAID order, then or later (what the fence is for). */
#define C1_T(k) ((k) > NTOK || (comp_mask & BIT(k)) == 0 || !LIVE(k))
#define C1 TALL(C1_T)

/* G2: a settled or sold token's order is in the book under that token (what load-3.lua
 * relies on when it nets out held tokens only). */
#define G2_T(k) ((k) > NTOK || !(t_state[k] == T_SETTLED || t_state[k] == T_SOLD) \
                 || (o_token[ORD(k)] == (k) && o_status[ORD(k)] != S_NONE && o_status[ORD(k)] != S_ABANDONED))
#define G2 TALL(G2_T)

/* G1: the gate never gives back units the book holds: a released token is never the
 * token of a PENDING or PAID order. */
#define G1_T(k) ((k) > NTOK || t_state[k] != T_RELEASED || !LIVE(k))
#define G1 TALL(G1_T)

/* G3: the gate never counts a unit twice (until Redis loses acknowledged writes): gate
 * available <= book available - units of open tokens the book does not hold, so the gate
 * never lets through a reserve the book cannot take. */
#define OPEN_NOT_LIVE(k) (((k) <= NTOK && OPEN(k) && !LIVE(k)) -> 1 : 0)
#define G3 (g_lost || g_stock == ABSENT || g_stock + TSUM(OPEN_NOT_LIVE) <= b_avail)

#define MONITOR(NAME, P, MSG) \
  active proctype NAME() { end: atomic { !(P) -> printf(MSG); assert(P) } }

MONITOR(I1_book_never_oversold, I1, "PROPERTY I1 violated\n")
MONITOR(I4_sold_and_locked_match_orders, I4, "PROPERTY I4 violated\n")
MONITOR(I6_one_refund_per_closed_payment, I6, "PROPERTY I6 violated\n")
MONITOR(C1_compensation_is_final, C1, "PROPERTY C1 violated\n")
MONITOR(G2_settled_means_in_book, G2, "PROPERTY G2 violated\n")
#ifdef CHECK_G1
MONITOR(G1_gate_never_gives_back_booked_units, G1, "PROPERTY G1 violated\n")
#endif
MONITOR(G3_gate_never_counts_a_unit_twice, G3, "PROPERTY G3 violated\n")

#ifdef LIVENESS
/* I5: once requests stop and the reconciler keeps running (weak fairness), the gate
 * equals the book for good and nothing is stuck: no unit locked, no token held. An absent
 * stock key counts as the book's figure: the next reserve loads it (net of held tokens,
 * and none are held). I5_strict asks for the key itself. */
#define GATE_EQ ((g_stock == ABSENT && g_nheld == 0) || g_stock == b_avail)
#define QUIET_OK (GATE_EQ && b_locked == 0 && g_nheld == 0)
ltl I5 { <> [] QUIET_OK }
ltl I5_strict { <> [] (g_stock == b_avail && b_locked == 0 && g_nheld == 0) }
#endif
