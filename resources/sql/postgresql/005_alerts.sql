-- FlashStock schema 5 (PostgreSQL): when a pending discrepancy's alert was delivered (ms
-- since the epoch, database clock); NULL = not yet, so a later pass sends it again.
ALTER TABLE discrepancies ADD COLUMN alerted_at BIGINT;
