-- FlashStock schema 10 (PostgreSQL): a drift that recurs is a new discrepancy; an approval's
-- adjustment names the discrepancy it resolves; the reconciler fences an attempt, not an order.

-- A discrepancy's key is unique among those that are healed (auto_fixed: a heal is recorded
-- once) or waiting for a person; a decided one no longer holds it, so the same drift found
-- again opens a new discrepancy.
ALTER TABLE discrepancies DROP CONSTRAINT discrepancies_dkey_key;
CREATE UNIQUE INDEX discrepancies_key ON discrepancies (dkey) WHERE status IN ('auto_fixed', 'pending_approval');

-- The discrepancy an approved correction resolves (NULL for restocks and the like); the
-- adjustment's reason is then the approver's own.
ALTER TABLE adjustments ADD COLUMN discrepancy_id BIGINT;

-- The gate tokens the reconciler gave back for an order it fenced (ABANDONED): a late
-- reserve carrying one of them fails, a retry with a fresh token takes the order over.
CREATE TABLE order_fences (
    order_id  TEXT NOT NULL,
    token     TEXT NOT NULL,
    fenced_at BIGINT NOT NULL,
    PRIMARY KEY (order_id, token)
);

-- A released order (expiry, release) whose gate tokens may still hold its units: set in the
-- release's transaction, cleared once the gate took them back, so the next expire gives
-- back what a run killed half-way (or an unreachable Redis) left.
ALTER TABLE orders ADD COLUMN gate_release_due INTEGER NOT NULL DEFAULT 0;
CREATE INDEX orders_gate_release_due ON orders (order_id) WHERE gate_release_due = 1;
