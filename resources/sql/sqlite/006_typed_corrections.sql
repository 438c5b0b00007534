-- FlashStock schema 6 (SQLite): a discrepancy's correction as values, not a mini-language,
-- the invariants it breaks, and what the reconcile checkpoints need for a windowed I4.

-- correction keeps only the kind ('restore', 'stocktake', 'order_status', 'refund'); an
-- order status change names its statuses, a refund its payment, in their own columns.
ALTER TABLE discrepancies ADD COLUMN status_from TEXT;
ALTER TABLE discrepancies ADD COLUMN status_to TEXT;
ALTER TABLE discrepancies ADD COLUMN payment_ref TEXT;
UPDATE discrepancies SET status_from = substr(correction, 14, instr(correction, '->') - 14),
    status_to = substr(correction, instr(correction, '->') + 2), correction = 'order_status'
    WHERE substr(correction, 1, 13) = 'order_status:';
UPDATE discrepancies SET payment_ref = substr(correction, 8), correction = 'refund'
    WHERE substr(correction, 1, 7) = 'refund:';
-- The invariants the finding breaks, as bits: I1 = 1, I2 = 2, I3 = 4, I4 = 8, I5 = 16, I6 = 32
-- (0 for the rows of earlier releases and for gate token heals).
ALTER TABLE discrepancies ADD COLUMN breaks INTEGER NOT NULL DEFAULT 0;

-- Per bucket, the part of the checkpointed replay moved by ledger rows of no order line
-- (adjustments): the orders' side of I4 is the replay less this.
ALTER TABLE reconcile_checkpoints ADD COLUMN other_locked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reconcile_checkpoints ADD COLUMN other_sold INTEGER NOT NULL DEFAULT 0;
UPDATE reconcile_checkpoints SET
    other_locked = (SELECT COALESCE(SUM(l.delta_locked), 0) FROM ledger l
        WHERE l.sku = reconcile_checkpoints.sku AND l.bucket = reconcile_checkpoints.bucket
        AND l.id <= (SELECT COALESCE(MAX(value), 0) FROM reconcile_state WHERE name = 'ledger_watermark')
        AND NOT EXISTS (SELECT 1 FROM order_lines ol WHERE ol.order_id = l.order_id AND ol.sku = l.sku
                        AND ol.bucket = l.bucket)),
    other_sold = (SELECT COALESCE(SUM(l.delta_sold), 0) FROM ledger l
        WHERE l.sku = reconcile_checkpoints.sku AND l.bucket = reconcile_checkpoints.bucket
        AND l.id <= (SELECT COALESCE(MAX(value), 0) FROM reconcile_state WHERE name = 'ledger_watermark')
        AND NOT EXISTS (SELECT 1 FROM order_lines ol WHERE ol.order_id = l.order_id AND ol.sku = l.sku
                        AND ol.bucket = l.bucket));
