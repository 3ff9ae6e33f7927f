-- PersistentLiveData schema version 7.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- Who wrote each version, and why (WriteAttribution): the author (at most 256 bytes of UTF-8) and the
-- reason (at most 4,096) in effect where the write was called, NULL when none was. Rows written before
-- this migration read NULL: adding a column rewrites no row. The row carries them, so every process that
-- reads the file sees them. A removal (PersistentStore.removeKey, pld-tool delete) records its own.
ALTER TABLE pld_values ADD COLUMN author TEXT;
ALTER TABLE pld_values ADD COLUMN reason TEXT;
ALTER TABLE pld_removed_keys ADD COLUMN author TEXT;
ALTER TABLE pld_removed_keys ADD COLUMN reason TEXT;
