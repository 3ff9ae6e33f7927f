import Testing

/// Parent of the suites for `Migrations/` (catalog, migrator), so that `swift test --filter Migration`
/// selects them all.
@Suite enum MigrationTests {}
