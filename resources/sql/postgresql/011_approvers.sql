-- FlashStock schema 11 (PostgreSQL): the approver policy lives in the book; every decision
-- records where it came from.

-- Who may approve or reject a discrepancy (and change this list). Seeded once from the data
-- dir's [approval] approvers= while the book has none (approval_policy.seeded).
CREATE TABLE approvers (
    name     TEXT PRIMARY KEY,
    added_by TEXT NOT NULL,
    added_at BIGINT NOT NULL
);

-- One row: a correction above four_eyes_units units needs two different approvers.
CREATE TABLE approval_policy (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    four_eyes_units INTEGER NOT NULL CHECK (four_eyes_units >= 0),
    seeded          INTEGER NOT NULL DEFAULT 0,
    changed_by      TEXT,
    changed_at      BIGINT
);
INSERT INTO approval_policy (id, four_eyes_units, seeded) VALUES (1, 100, 0);

-- Every decision on a discrepancy: the asserted operator beside the OS user, host and
-- database role (current_user) it came from. applied = 0 for a first approval that waits
-- for a second approver.
CREATE TABLE discrepancy_decisions (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    discrepancy_id BIGINT NOT NULL,
    decision       TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
    operator       TEXT NOT NULL,
    os_user        TEXT NOT NULL,
    host           TEXT NOT NULL,
    db_role        TEXT,
    reason         TEXT NOT NULL,
    applied        INTEGER NOT NULL,
    decided_at     BIGINT NOT NULL
);
CREATE INDEX discrepancy_decisions_of ON discrepancy_decisions (discrepancy_id, id);
