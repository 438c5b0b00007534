-- FlashStock schema 14 (PostgreSQL): what a console reads. A server's heartbeat carries where it
-- listens, so a console can ask it for /readyz and /metrics (ExpiryStore; empty for expirers
-- that serve nothing); a discrepancy names the level its gate, book and ledger figures count
-- (DiscrepancyLevel; empty for those found before).
ALTER TABLE expirer_heartbeats ADD COLUMN address TEXT NOT NULL DEFAULT '';
ALTER TABLE discrepancies ADD COLUMN level TEXT NOT NULL DEFAULT '';
