-- FlashStock schema 9 (PostgreSQL): who releases holds past their expiry. One row per
-- expirer process (`expire --every`, a console, the server), rewritten by each of its passes,
-- so an operator sees whether something is releasing them (ExpiryStore).
CREATE TABLE expirer_heartbeats (
    expirer  TEXT PRIMARY KEY,   -- KIND@HOST:PID
    kind     TEXT NOT NULL,      -- expire-every, console, server
    operator TEXT NOT NULL,
    every_ms BIGINT NOT NULL,    -- the interval between its passes it promised, ms
    beat_at  BIGINT NOT NULL,    -- its last pass, ms since the epoch (database clock)
    released BIGINT NOT NULL     -- orders that pass released
);
