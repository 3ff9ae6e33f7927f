import PersistentLiveData

/// Reports a version a write command wrote: `Wrote version 8 of key settings.` or its row as JSON.
struct WrittenVersion {
  var database: String
  var key: String
  var version: Int64

  /// Writes the report; `extra` members are appended to the JSON object, `suffix` to the sentence.
  func report(json: Bool, extra: [JSONValue.Member] = [], suffix: String = "") throws {
    let console = Console.current
    guard json else {
      console.writeLine("Wrote version \(version) of key \(TerminalText.key(key))\(suffix).")
      return
    }
    // Read back what the library stored (its canonical JSON and time) without writing anything.
    let inspector = try StoreAccess.inspector(database)
    defer { inspector.close() }
    guard case .object(let members) = RowOutput(try inspector.row(key: key, version: version)).json else {
      return
    }
    console.writeJSON(.object(members + extra))
  }
}
