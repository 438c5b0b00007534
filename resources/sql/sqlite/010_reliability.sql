-- FlashStock schema 10 (SQLite): a drift that recurs is a new discrepancy; an approval's
-- adjustment names the discrepancy it resolves; the reconciler fences an attempt, not an order.

-- A discrepancy's key is unique among those that are healed (auto_fixed: a heal is recorded
-- once) or waiting for a person; a decided one no longer holds it, so the same drift found
-- again opens a new discrepancy. SQLite cannot drop a column's UNIQUE: the table is rebuilt.
CREATE TABLE discrepancies_v10 (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    dkey            TEXT NOT NULL,
    kind            TEXT NOT NULL,
    sku             TEXT NOT NULL,
    bucket          INTEGER NOT NULL,
    order_id        TEXT,
    token           TEXT,
    status          TEXT NOT NULL CHECK (status IN ('auto_fixed', 'pending_approval', 'approved', 'rejected')),
    delta           INTEGER NOT NULL,
    gate_value      INTEGER NOT NULL,
    book_value      INTEGER NOT NULL,
    ledger_value    INTEGER NOT NULL,
    correction      TEXT,
    found_available INTEGER,
    found_locked    INTEGER,
    found_sold      INTEGER,
    target_available INTEGER,
    target_locked   INTEGER,
    target_sold     INTEGER,
    pauses          INTEGER NOT NULL DEFAULT 0,
    proposal        TEXT NOT NULL,
    detail          TEXT NOT NULL,
    detected_at     INTEGER NOT NULL,
    resolved_at     INTEGER,
    resolved_by     TEXT,
    reason          TEXT,
    alerted_at      INTEGER,
    alert_claimed_at INTEGER,
    status_from     TEXT,
    status_to       TEXT,
    payment_ref     TEXT,
    breaks          INTEGER NOT NULL DEFAULT 0
);
INSERT INTO discrepancies_v10 (id, dkey, kind, sku, bucket, order_id, token, status, delta, gate_value, book_value,
    ledger_value, correction, found_available, found_locked, found_sold, target_available, target_locked, target_sold,
    pauses, proposal, detail, detected_at, resolved_at, resolved_by, reason, alerted_at, alert_claimed_at, status_from,
    status_to, payment_ref, breaks)
    SELECT id, dkey, kind, sku, bucket, order_id, token, status, delta, gate_value, book_value, ledger_value, correction,
    found_available, found_locked, found_sold, target_available, target_locked, target_sold, pauses, proposal, detail,
    detected_at, resolved_at, resolved_by, reason, alerted_at, alert_claimed_at, status_from, status_to, payment_ref,
    breaks FROM discrepancies;
DROP TABLE discrepancies;
ALTER TABLE discrepancies_v10 RENAME TO discrepancies;
CREATE INDEX discrepancies_open ON discrepancies (sku) WHERE status = 'pending_approval';
CREATE UNIQUE INDEX discrepancies_key ON discrepancies (dkey) WHERE status IN ('auto_fixed', 'pending_approval');

-- The discrepancy an approved correction resolves (NULL for restocks and the like); the
-- adjustment's reason is then the approver's own.
ALTER TABLE adjustments ADD COLUMN discrepancy_id INTEGER;

-- The gate tokens the reconciler gave back for an order it fenced (ABANDONED): a late
-- reserve carrying one of them fails, a retry with a fresh token takes the order over.
CREATE TABLE order_fences (
    order_id  TEXT NOT NULL,
    token     TEXT NOT NULL,
    fenced_at INTEGER NOT NULL,
    PRIMARY KEY (order_id, token)
);

-- A released order (expiry, release) whose gate tokens may still hold its units: set in the
-- release's transaction, cleared once the gate took them back, so the next expire gives
-- back what a run killed half-way (or an unreachable Redis) left.
ALTER TABLE orders ADD COLUMN gate_release_due INTEGER NOT NULL DEFAULT 0;
CREATE INDEX orders_gate_release_due ON orders (order_id) WHERE gate_release_due = 1;
