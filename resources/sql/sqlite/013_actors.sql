-- FlashStock schema 13 (SQLite): the book says who acted. An order records who created it
-- (through the server: its bearer token's name), so a storefront's token can be kept to the
-- orders it created; a refund records who recorded it and from which program, as a ledger
-- row does. Rows written before this version keep NULL there: their creator was not
-- recorded (an order's RESERVE ledger rows name the operator), and such an order belongs to
-- no token.
ALTER TABLE orders ADD COLUMN created_by TEXT;
ALTER TABLE refunds ADD COLUMN operator TEXT;
ALTER TABLE refunds ADD COLUMN source TEXT;
