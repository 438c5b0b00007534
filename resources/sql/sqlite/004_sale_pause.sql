-- FlashStock schema 4 (SQLite): a sale can be paused (closed for now, resumed by start).
-- SQLite cannot change a CHECK in place: the table is rebuilt with its rows.

CREATE TABLE sales_v4 (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    sku            TEXT NOT NULL REFERENCES skus (sku),
    status         TEXT NOT NULL CHECK (status IN ('scheduled', 'open', 'paused', 'stopped')),
    start_at       INTEGER,
    end_at         INTEGER,
    hold_seconds   INTEGER NOT NULL CHECK (hold_seconds > 0),
    per_user_limit INTEGER NOT NULL CHECK (per_user_limit >= 0),
    book_only      INTEGER NOT NULL DEFAULT 0 CHECK (book_only IN (0, 1)),
    units          INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    created_by     TEXT NOT NULL
);
INSERT INTO sales_v4 (id, sku, status, start_at, end_at, hold_seconds, per_user_limit, book_only, units, created_at,
                      created_by)
    SELECT id, sku, status, start_at, end_at, hold_seconds, per_user_limit, book_only, units, created_at, created_by
    FROM sales;
DROP TABLE sales;
ALTER TABLE sales_v4 RENAME TO sales;
CREATE INDEX sales_sku ON sales (sku, id);
