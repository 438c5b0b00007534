-- FlashStock schema 7 (SQLite): the server's bearer tokens (`token add`). Only the SHA-256
-- of a secret is kept; the secret is shown once, when the token is added. A revoked token
-- keeps its row (who added and revoked it, when) and its name is not given out again.
CREATE TABLE access_tokens (
    name          TEXT PRIMARY KEY,
    secret_sha256 TEXT NOT NULL UNIQUE,
    scopes        TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    created_by    TEXT NOT NULL,
    revoked_at    INTEGER,
    revoked_by    TEXT
);
