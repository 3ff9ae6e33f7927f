-- PersistentLiveDataPostgres, schema version 4: removed keys, for collections (PostgresStore.removeKey,
-- SharedCollection.remove).
--
-- A removal deletes every value row of a key and records here the version it took: one above the key's
-- last, which the key's heads row keeps, so a later write continues above it (numbers are never reused).
-- A key is removed when its heads row's version has no value row. changed_by is the id of the removing
-- transaction, as in pld_values: a catch-up and a collection's changes read removals since a horizon the
-- same way they read writes.
--
-- The index that serves a prefix of keys (pld_heads_key_prefix) is not built here: it is built
-- concurrently, outside this transaction, by PostgresStore.run() (SharedSchema.concurrentIndexes), so that
-- writers never wait for it on a large pld_heads.
CREATE TABLE pld_removals (
  key_hash text NOT NULL,
  version bigint NOT NULL CHECK (version >= 1),
  removed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  changed_by bigint DEFAULT pg_current_xact_id()::text::bigint,
  author text,
  reason text,
  PRIMARY KEY (key_hash, version)
);
CREATE INDEX pld_removals_changed_by ON pld_removals (changed_by);
