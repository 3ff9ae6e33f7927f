-- PersistentLiveDataPostgres, schema version 6: the replicas running on this database, so that an
-- operator (`pld-tool replicas`, the inspector) sees which releases run side by side, and is warned
-- before a migration marked read-only or incompatible would strand one of them.
--
-- Each PostgresStore.run() adds its row once the schema is ready, refreshes heartbeat_at at every
-- catch-up interval (at least every 10 s) and deletes the row when it ends. A row whose heartbeat is
-- older than a minute is a replica that ended without a word: readers leave it out, and a replica that
-- starts deletes it. schema_version is the newest shared schema the replica's release knows (it knows
-- migrations 1 to schema_version); access is read-write, or read-only when a newer release's migration
-- made it so. Read-write for older releases: a replica that does not know the table never reads it.
CREATE TABLE pld_replicas (
  id              text        PRIMARY KEY,
  host            text        NOT NULL,
  pid             integer     NOT NULL,
  library_version text        NOT NULL,
  schema_version  integer     NOT NULL,
  access          text        NOT NULL,
  started_at      timestamptz NOT NULL DEFAULT now(),
  heartbeat_at    timestamptz NOT NULL DEFAULT now()
);
