-- FlashStock schema 12 (SQLite): a decision carries the figures it decides on.

-- A bucket finding's figures beside found (found_*) and its ledger (target_*): the bucket's
-- stored total; what its orders held (I4: the locked and sold of its PENDING and PAID
-- lines), so that no correction the orders contradict is proposed, not even after a
-- rejection; and for a match_orders correction, the levels it sets. NULL for other findings
-- and for rows of earlier releases.
ALTER TABLE discrepancies ADD COLUMN found_total INTEGER;
ALTER TABLE discrepancies ADD COLUMN orders_locked INTEGER;
ALTER TABLE discrepancies ADD COLUMN orders_sold INTEGER;
ALTER TABLE discrepancies ADD COLUMN set_available INTEGER;
ALTER TABLE discrepancies ADD COLUMN set_locked INTEGER;
ALTER TABLE discrepancies ADD COLUMN set_sold INTEGER;

-- The fingerprint of the proposal each decision was made on: a first approval counts towards
-- the second only while the proposal is the one it saw. NULL for earlier releases' decisions.
ALTER TABLE discrepancy_decisions ADD COLUMN seen TEXT;
