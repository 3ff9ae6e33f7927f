-- PersistentLiveData schema version 1.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- One row per (key, version). The payload is the value encoded as JSON text (sorted keys), so any
-- SQLite client can read it, e.g. json_extract(payload, '$.name').
CREATE TABLE pld_values (
  key        TEXT    NOT NULL,
  version    INTEGER NOT NULL CHECK (version >= 1),
  written_at INTEGER NOT NULL,            -- milliseconds since 1970-01-01T00:00:00Z
  payload    TEXT    NOT NULL,
  PRIMARY KEY (key, version)
) WITHOUT ROWID;

-- Every migration applied to this file, in order. PRAGMA user_version mirrors the highest one.
CREATE TABLE pld_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at INTEGER NOT NULL             -- milliseconds since 1970-01-01T00:00:00Z
);
