-- PersistentLiveData schema version 9.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- What a library that does not know a migration may do with this file (API §20), recorded with each
-- migration when it is applied: 'read-write' (an older library keeps reading and writing: an added
-- table, column, index or trigger), 'read-only' (it may read; each write throws, naming the migration) or
-- 'incompatible' (it refuses the file). A library meeting migrations past what it knows opens the file by
-- the worst of their marks. Every later migration records its own mark; the ones before this one are
-- marked here: the initial schema has nothing before it; 0003 (removals) is read-only, for a library
-- without it would number a removed key's next version from 1 again; the others only added.
ALTER TABLE pld_migrations ADD COLUMN compatibility TEXT NOT NULL DEFAULT 'read-write'
  CHECK (compatibility IN ('read-write', 'read-only', 'incompatible'));

UPDATE pld_migrations SET compatibility = 'incompatible' WHERE version = 1;
UPDATE pld_migrations SET compatibility = 'read-only' WHERE version = 3;
