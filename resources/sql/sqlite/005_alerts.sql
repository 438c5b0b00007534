-- FlashStock schema 5 (SQLite): when a pending discrepancy's alert was delivered (ms since
-- the epoch, database clock); NULL = not yet, so a later pass sends it again.
ALTER TABLE discrepancies ADD COLUMN alerted_at INTEGER;
-- When a reconcile process took the alert to send it: another process skips it for a
-- while, so two reconcilers do not both send it.
ALTER TABLE discrepancies ADD COLUMN alert_claimed_at INTEGER;
