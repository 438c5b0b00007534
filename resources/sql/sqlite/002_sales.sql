-- FlashStock schema 2 (SQLite): flash sales. A SKU with a sale is a flash-sale SKU: its
-- latest sale's window, hold and per-user limit apply to every reserve.

CREATE TABLE sales (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    sku            TEXT NOT NULL REFERENCES skus (sku),
    status         TEXT NOT NULL CHECK (status IN ('scheduled', 'open', 'stopped')),
    start_at       INTEGER,
    end_at         INTEGER,
    hold_seconds   INTEGER NOT NULL CHECK (hold_seconds > 0),
    per_user_limit INTEGER NOT NULL CHECK (per_user_limit >= 0),
    book_only      INTEGER NOT NULL DEFAULT 0 CHECK (book_only IN (0, 1)),
    units          INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    created_by     TEXT NOT NULL
);
CREATE INDEX sales_sku ON sales (sku, id);
