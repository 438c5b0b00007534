-- FlashStock schema 4 (PostgreSQL): a sale can be paused (closed for now, resumed by start).

ALTER TABLE sales DROP CONSTRAINT sales_status_check;
ALTER TABLE sales ADD CONSTRAINT sales_status_check CHECK (status IN ('scheduled', 'open', 'paused', 'stopped'));
