/* State of the gate (Redis) and of the book (SQL), plus the ghosts the properties need. */

/* --- gate (Redis keys fs:{sku}:*) ------------------------------------------------------ */
#define ABSENT 255
byte g_stock = TOTAL;       /* fs:{sku}:stock; ABSENT = no key. Loaded by sku add. */
#define T_NONE     0        /* no record: never issued, or lost with Redis's data */
#define T_HELD     1
#define T_SETTLED  2
#define T_RELEASED 3
#define T_SOLD     4
byte t_state[NTOK + 1];     /* fs:{sku}:tokens records (+ the held/settled/done sets) */
byte g_map[NORD];           /* fs:{sku}:orders: order -> token (0 none) */
byte g_nheld;               /* ZCARD fs:{sku}:held (kept in step with t_state) */
bit  g_paused;              /* fs:{sku}:paused */
bit  g_noscript;            /* the server's script cache is empty (SCRIPT FLUSH, restart) */

/* --- book (SQL tables buckets, orders, order_lines, refunds) ----------------------------- */
short b_avail = TOTAL;      /* buckets.available (one bucket; total is constant: no restock) */
short b_locked;
short b_sold;
#define S_NONE      0
#define S_PENDING   1
#define S_PAID      2
#define S_CLOSED    3
#define S_ABANDONED 4       /* the reconciler's fence */
byte o_status[NORD];
byte o_token[NORD];         /* order_lines.token */
byte o_refunds[NORD];       /* refunds rows of the order's one payment reference */
bit  o_due[NORD];           /* orders.gate_release_due: released in the book, the gate not told yet */
short fenced;               /* tokens the reconciler fenced (attempts it gave back) */

/* --- ghosts (not in any server; only the properties read them) --------------------------- */
byte o_ngen[NORD];          /* tokens issued for the order so far (ids unique across restarts) */
bit  o_paycb[NORD];         /* a payment callback's confirm transaction committed */
short comp_mask;            /* tokens the reconciler's compensation released */
bit  g_lost;                /* Redis lost its data at least once */
short oldmask;                /* LIVENESS runs: tokens older than the grace (Redis time) */

/* --- fault budgets ----------------------------------------------------------------------- */
byte n_fault;               /* faults so far (MAXFAULTS) */

/* The book holds token t for a live order: t is the line token of a PENDING or PAID order. */
#define LIVE(t) ((o_status[ORD(t)] == S_PENDING || o_status[ORD(t)] == S_PAID) && o_token[ORD(t)] == (t))
#define OPEN(t) (t_state[t] == T_HELD || t_state[t] == T_SETTLED)
