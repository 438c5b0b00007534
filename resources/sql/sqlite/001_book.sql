-- FlashStock book of record, schema 1 (SQLite). Times are ms since the epoch, by the
-- database clock. Units are whole units of stock.

CREATE TABLE skus (
    sku          TEXT PRIMARY KEY,
    bucket_count INTEGER NOT NULL CHECK (bucket_count >= 1),
    created_at   INTEGER NOT NULL,
    created_by   TEXT NOT NULL
);

-- I1 holds by construction: no level below zero, the levels always sum to total.
CREATE TABLE buckets (
    sku       TEXT NOT NULL REFERENCES skus (sku),
    bucket    INTEGER NOT NULL CHECK (bucket >= 0),
    available INTEGER NOT NULL,
    locked    INTEGER NOT NULL,
    sold      INTEGER NOT NULL,
    total     INTEGER NOT NULL,
    PRIMARY KEY (sku, bucket),
    CHECK (available >= 0 AND locked >= 0 AND sold >= 0 AND available + locked + sold = total)
);

-- Status changes only by compare-and-set on (status, version). ABANDONED is the fence the
-- reconciler sets on an order whose gate units it gave back: a late reserve then fails.
CREATE TABLE orders (
    order_id     TEXT PRIMARY KEY,
    user_id      TEXT,
    status       TEXT NOT NULL CHECK (status IN ('PENDING', 'PAID', 'CLOSED', 'ABANDONED')),
    version      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    payment_ref  TEXT,
    paid_at      INTEGER,
    closed_at    INTEGER,
    close_reason TEXT
);
CREATE INDEX orders_pending_due ON orders (expires_at, order_id) WHERE status = 'PENDING';

-- One row per (order, SKU, bucket) the order holds; token is the gate's pre-deduct id.
CREATE TABLE order_lines (
    order_id TEXT NOT NULL REFERENCES orders (order_id),
    sku      TEXT NOT NULL REFERENCES skus (sku),
    bucket   INTEGER NOT NULL,
    qty      INTEGER NOT NULL CHECK (qty > 0),
    token    TEXT,
    PRIMARY KEY (order_id, sku, bucket)
);
CREATE INDEX order_lines_sku ON order_lines (sku, bucket);

-- Restocks, stocktakes, approved corrections: each names its operator.
CREATE TABLE adjustments (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    sku      TEXT NOT NULL REFERENCES skus (sku),
    kind     TEXT NOT NULL,
    units    INTEGER NOT NULL,
    reason   TEXT NOT NULL,
    operator TEXT NOT NULL,
    at       INTEGER NOT NULL
);

-- Append-only journal of stock movements. The UNIQUE key makes every order operation
-- idempotent; an adjustment's rows carry order_id 'adj:<id>'.
CREATE TABLE ledger (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id         TEXT NOT NULL,
    operation        TEXT NOT NULL CHECK (operation IN ('RESERVE', 'CONFIRM', 'RELEASE', 'ADJUST')),
    sku              TEXT NOT NULL,
    bucket           INTEGER NOT NULL,
    token            TEXT,
    delta_available  INTEGER NOT NULL,
    delta_locked     INTEGER NOT NULL,
    delta_sold       INTEGER NOT NULL,
    available_before INTEGER NOT NULL,
    locked_before    INTEGER NOT NULL,
    sold_before      INTEGER NOT NULL,
    available_after  INTEGER NOT NULL,
    locked_after     INTEGER NOT NULL,
    sold_after       INTEGER NOT NULL,
    at               INTEGER NOT NULL,
    operator         TEXT NOT NULL,
    source           TEXT NOT NULL,
    UNIQUE (order_id, operation, sku, bucket)
);
CREATE INDEX ledger_sku ON ledger (sku, id);

-- A payment that reached an order it can no longer pay: one refund per (order, payment).
CREATE TABLE refunds (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id    TEXT NOT NULL REFERENCES orders (order_id),
    payment_ref TEXT NOT NULL,
    reason      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (order_id, payment_ref)
);
