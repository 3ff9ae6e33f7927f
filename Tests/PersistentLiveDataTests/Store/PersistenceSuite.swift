import Testing

/// The tests of the SQLite store's public face (its `Store/` folder): `PersistentStore`,
/// `PersistentLiveData` and the database file, on real SQLite files. Run them with
/// `swift test --filter Persistence`.
@Suite enum Persistence {}
