extension StoreInspector {
  /// How many stored versions of `key` have each value schema version
  /// (``/PersistentLiveDataBackend/PersistentValue/schemaVersion``); empty when no version of the key is
  /// stored. Reads the key's rows by the primary key, without their payloads.
  ///
  /// ```swift
  /// let counts = try inspector.schemaVersionCounts(of: "settings")   // [1: 3, 2: 1]
  /// if counts.count > 1 { askWhichShapeTheValueHas() }
  /// ```
  /// - Throws: A ``/PersistentLiveDataBackend/PersistentLiveDataError`` naming the file.
  package func schemaVersionCounts(of key: String) throws -> [Int: Int] {
    guard hasValuesTable else { return [:] }
    return try reading {
      let statement = try connection.prepare(
        "SELECT \(schemaVersionColumn), count(*) FROM pld_values WHERE key = ? GROUP BY 1")
      try statement.bind(key, at: 1)
      var counts: [Int: Int] = [:]
      while try statement.step() {
        counts[Int(clamping: statement.int64(0))] = Int(clamping: statement.int64(1))
      }
      return counts
    }
  }
}
