-- The contest's database (store.py; docs/server.md, "What the server keeps").
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS teams (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_sha256 TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    team_id INTEGER NOT NULL REFERENCES teams(id),
    name TEXT NOT NULL,
    label TEXT NOT NULL UNIQUE,
    entry TEXT NOT NULL,
    phase TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'scored', 'failed')),
    sha256 TEXT NOT NULL,
    submitted TEXT NOT NULL,
    finished TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    reason TEXT,
    per_run TEXT
);
CREATE INDEX IF NOT EXISTS runs_team ON runs(team_id, phase);
