-- FlashStock schema 3 (SQLite): reconciliation. Times are ms since the epoch (database
-- clock); units are whole units of stock.

-- Every discrepancy a reconcile pass found. dkey is the heal's idempotency key: the same
-- finding (kind, SKU, bucket, token or figures) is recorded, and healed, once.
CREATE TABLE discrepancies (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    dkey            TEXT NOT NULL UNIQUE,
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
    reason          TEXT
);
CREATE INDEX discrepancies_open ON discrepancies (sku) WHERE status = 'pending_approval';

-- Scalar reconcile state, e.g. 'ledger_watermark' (ledger id up to which checkpoints count).
CREATE TABLE reconcile_state (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);

-- Per bucket: the ledger replayed up to the watermark, so a pass replays only the window.
CREATE TABLE reconcile_checkpoints (
    sku       TEXT NOT NULL,
    bucket    INTEGER NOT NULL,
    available INTEGER NOT NULL,
    locked    INTEGER NOT NULL,
    sold      INTEGER NOT NULL,
    PRIMARY KEY (sku, bucket)
);
