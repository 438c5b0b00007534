/* Bounds and switches of the FlashStock protocol model (README.md, "Reliability").
 * Every bound can be overridden on the spin command line (spin -DNORD=3 ...);
 * scripts/model-check.sh names the configurations it checks. */

#ifndef NORD
#define NORD 2          /* orders (buyers); each wants 1 unit (at most 6) */
#endif
#ifndef TOTAL
#define TOTAL 1         /* units of the one SKU (one bucket): fewer than the orders */
#endif
#ifndef MAXATT
#define MAXATT 2        /* reserve attempts per order: the first and one client retry */
#endif
#ifndef MAXFAULTS
#define MAXFAULTS 2     /* faults in one run, of any kinds enabled below */
#endif
/* Fault kinds (1 = may happen): */
#ifndef CRASH
#define CRASH 1         /* an actor crashes, any actor, before any step after one with an effect */
#endif
#ifndef LOSS
#define LOSS 1          /* Redis loses all its data (restart without persistence, failover) */
#endif
#ifndef EVICT
#define EVICT 1         /* the stock key alone disappears (eviction, DEL) */
#endif
#ifndef FLUSH
#define FLUSH 1         /* SCRIPT FLUSH */
#endif
#ifndef DBFAIL
#define DBFAIL 1        /* the reserve's book transaction fails: rolled back, or its COMMIT reply lost */
#endif
/* Not a kind of its own: a reserve-2.lua call that runs and whose reply is lost (a
 * connection drop) leaves what a crash right after it leaves, and the engine then does
 * what a client does after a crash (gate_unavailable: retry or give up). */
#define FAULT(kind) (n_fault < MAXFAULTS && (kind))
#define MAXLOSS (LOSS * MAXFAULTS)

#ifndef NDUP
#define NDUP 0          /* extra concurrent reserve requests for order 0 (a client resending) */
#endif
#ifndef OPERATOR
#define OPERATOR 0      /* 1: an operator runs `gate rebuild` once, at any moment */
#endif

/* Roles of the orders (bit k = order k): what the shop and the payment provider may do
 * with a reserved order. By default order 0 (and 3) pays once or twice; order 1 pays
 * once, never (lost callback) or cancels; orders 2 and 5 pay once, cancel or never pay;
 * order 4 pays once or never. */
#ifndef PAY_ONCE
#define PAY_ONCE   63
#endif
#ifndef PAY_TWICE
#define PAY_TWICE   9
#endif
#ifndef PAY_NEVER
#define PAY_NEVER  54
#endif
#ifndef PAY_CANCEL
#define PAY_CANCEL 38
#endif
#ifndef RETRY
#define RETRY      63       /* orders whose client may send the reserve again */
#endif

/* Tokens: order o's k-th token is o*TG+k+1. Each reserve attempt issues at most one (a
 * new one when Redis lost the order's mapping or the order's last token was released),
 * so an order has at most MAXATT per buyer process; ids stay unique across restarts as
 * reserve-2.lua's TIME-based ids do. */
#define TG    (MAXATT * (1 + NDUP))
#define NTOK  (NORD * TG)
#define ORD(t) (((t) - 1) / TG)
#define BIT(t) (1 << ((t) - 1))   /* token t in a 16-bit mask */
