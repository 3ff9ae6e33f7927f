-- PersistentLiveDataPostgres, schema version 1: the tables a shared store keeps on a PostgreSQL server.
--
-- Applied by PostgresStore.run() (or on first use) inside one transaction that holds an advisory lock,
-- so replicas that start together apply it once. Statements are separated by a semicolon at the end of
-- a line; the store records the applied version in pld_schema.

-- One row per key: its latest version. Writers of a key queue on this row, so versions are 1, 2, 3 …
-- with no gap and commit in order. The key is identified by the SHA-256 of its UTF-8 (hex): a key of any
-- length fits the index.
CREATE TABLE pld_heads (
  key_hash text PRIMARY KEY,
  key text NOT NULL,
  version bigint NOT NULL CHECK (version >= 1)
);

-- Every kept version of every key: the value's JSON as the encoder wrote it, the schema version of the
-- value type that wrote it, and when it was committed. Retention deletes old versions; nothing else
-- changes a row.
CREATE TABLE pld_values (
  key_hash text NOT NULL,
  version bigint NOT NULL CHECK (version >= 1),
  payload text NOT NULL,
  schema_version integer NOT NULL DEFAULT 1 CHECK (schema_version >= 1),
  written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (key_hash, version)
);
