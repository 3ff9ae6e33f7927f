-- PersistentLiveDataPostgres, schema version 2: which transaction wrote each version, so that a replica's
-- periodic catch-up asks for what changed instead of comparing every live key (PostgreSQL 13 or newer).
--
-- changed_by is the 64-bit id of the transaction that inserted the row (pg_current_xact_id(), filled in
-- by the default, whoever writes). A catch-up reads the keys of the rows whose changed_by is at least the
-- xmin of its previous look's snapshot: every transaction that snapshot did not see has an id at least
-- that large (ids below xmin had all ended), so no commit is skipped, however commits and ids interleave.
-- Rows written before this migration keep NULL; the first catch-up of every replica compares every live
-- key.
ALTER TABLE pld_values ADD COLUMN changed_by bigint;
ALTER TABLE pld_values ALTER COLUMN changed_by SET DEFAULT pg_current_xact_id()::text::bigint;
CREATE INDEX pld_values_changed_by ON pld_values (changed_by);
