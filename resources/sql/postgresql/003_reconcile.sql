-- FlashStock schema 3 (PostgreSQL): reconciliation. Times are ms since the epoch (database
-- clock); units are whole units of stock.

-- Every discrepancy a reconcile pass found. dkey is the heal's idempotency key: the same
-- finding (kind, SKU, bucket, token or figures) is recorded, and healed, once.
CREATE TABLE discrepancies (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dkey            TEXT NOT NULL UNIQUE,
    kind            TEXT NOT NULL,
    sku             TEXT NOT NULL,
    bucket          BIGINT NOT NULL,
    order_id        TEXT,
    token           TEXT,
    status          TEXT NOT NULL CHECK (status IN ('auto_fixed', 'pending_approval', 'approved', 'rejected')),
    delta           BIGINT NOT NULL,
    gate_value      BIGINT NOT NULL,
    book_value      BIGINT NOT NULL,
    ledger_value    BIGINT NOT NULL,
    correction      TEXT,
    found_available BIGINT,
    found_locked    BIGINT,
    found_sold      BIGINT,
    target_available BIGINT,
    target_locked   BIGINT,
    target_sold     BIGINT,
    pauses          BIGINT NOT NULL DEFAULT 0,
    proposal        TEXT NOT NULL,
    detail          TEXT NOT NULL,
    detected_at     BIGINT NOT NULL,
    resolved_at     BIGINT,
    resolved_by     TEXT,
    reason          TEXT
);
CREATE INDEX discrepancies_open ON discrepancies (sku) WHERE status = 'pending_approval';

-- Scalar reconcile state, e.g. 'ledger_watermark' (ledger id up to which checkpoints count).
CREATE TABLE reconcile_state (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);

-- Per bucket: the ledger replayed up to the watermark, so a pass replays only the window.
CREATE TABLE reconcile_checkpoints (
    sku       TEXT NOT NULL,
    bucket    BIGINT NOT NULL,
    available BIGINT NOT NULL,
    locked    BIGINT NOT NULL,
    sold      BIGINT NOT NULL,
    PRIMARY KEY (sku, bucket)
);
