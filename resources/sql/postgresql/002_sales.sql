-- FlashStock schema 2 (PostgreSQL): flash sales. A SKU with a sale is a flash-sale SKU: its
-- latest sale's window, hold and per-user limit apply to every reserve.

CREATE TABLE sales (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sku            TEXT NOT NULL REFERENCES skus (sku),
    status         TEXT NOT NULL CHECK (status IN ('scheduled', 'open', 'stopped')),
    start_at       BIGINT,
    end_at         BIGINT,
    hold_seconds   BIGINT NOT NULL CHECK (hold_seconds > 0),
    per_user_limit BIGINT NOT NULL CHECK (per_user_limit >= 0),
    book_only      BIGINT NOT NULL DEFAULT 0 CHECK (book_only IN (0, 1)),
    units          BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    created_by     TEXT NOT NULL
);
CREATE INDEX sales_sku ON sales (sku, id);
