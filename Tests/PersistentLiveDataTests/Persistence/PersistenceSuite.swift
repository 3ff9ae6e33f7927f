import Testing

/// The persistence tests: `PersistentStore`, `PersistentLiveData` and the database file, on real SQLite
/// files. Run them with `swift test --filter Persistence`.
@Suite enum Persistence {}
