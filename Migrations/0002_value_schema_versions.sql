-- PersistentLiveData schema version 2.
-- Shipped migrations are never edited: a change of schema is a new numbered file.

-- Every version records the schema version of the value type that wrote it (PersistentValue's
-- schemaVersion; a plain Codable value is schema 1), so that a newer build of the type can upgrade it
-- when reading and an older build can tell that it cannot. Every row written before this migration was
-- written by a plain Codable value or before schemas existed: schema 1, the default. Adding a column
-- rewrites no row: SQLite returns the default for rows stored before the column existed.
ALTER TABLE pld_values
  ADD COLUMN schema_version INTEGER NOT NULL DEFAULT 1 CHECK (schema_version >= 1);
