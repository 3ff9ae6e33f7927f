import ArgumentParser
import PersistentLiveData

extension PLDTool {
  /// `prune DB [KEY] [--keep N]`: deletes old versions, honouring each key's recorded retention.
  struct Prune: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Delete the versions older than the newest N of a key, or of every key.",
      discussion: """
        A key whose retention is recorded in the store (an app asked for it with \
        liveData(_:default:retention:); `keys` shows it) never loses what that retention keeps: with \
        --keep, such a key keeps the larger of the two, and a key that keeps every version is left alone. \
        Without --keep, each key with a recorded retention is pruned to it and the others are left alone. \
        The latest version is never deleted, and version numbers are never reused.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The key (default: every key).")
    var key: String?

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp(
        "How many of the newest versions to keep (at least 1); default: each key's recorded retention.",
        valueName: "n"),
      transform: NumberArgument.parse(atLeast: 1))
    var keep: Int?

    func validate() throws {
      if let keep, keep < 1 { throw ValidationError("--keep must be at least 1.") }
    }

    func run() throws {
      let inspector = try StoreAccess.inspector(options.database)
      let keys = try key.map { key in [try inspector.keyStatistics(for: key).key] } ?? inspector.keys()
      inspector.close()

      let store = try StoreAccess.store(options.database, ifMissing: .fail)
      let progress = Progress("pruning", total: keys.count)
      var outcome = PruneOutcome()
      var keysPruned = 0
      do {
        // One transaction per key: each key is pruned completely or not at all.
        for key in keys {
          let pruned = try store.prune(key: key, keep: keep)
          outcome.deleted += pruned.deleted
          if pruned.deleted > 0 { keysPruned += 1 }
          outcome.keptByRetention.merge(pruned.keptByRetention) { $1 }
          progress.advance()
        }
        progress.finish()
      } catch {
        progress.finish()
        throw error
      }
      try store.close()
      report(outcome, keysPruned: keysPruned, keyCount: keys.count)
    }

    /// `keysPruned`: how many of the `keyCount` keys considered lost versions.
    private func report(_ outcome: PruneOutcome, keysPruned: Int, keyCount: Int) {
      let console = Console.current
      let protected = outcome.keptByRetention.map { (key: $0.key.text, value: $0.value) }
        .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
      if options.json {
        console.writeJSON(
          .object([
            .init("key", key.map(JSONValue.string) ?? .null),
            .init("keep", keep.map(JSONValue.integer) ?? .null),
            .init("deleted", .integer(outcome.deleted)),
            .init("keysPruned", .integer(keysPruned)),
            .init("keysConsidered", .integer(keyCount)),
            .init(
              "keptByRetention",
              .object(protected.map { .init($0.key, RetentionText.json($0.value)) })),
          ]))
        return
      }
      let deletedVersions = HumanFormat.count(outcome.deleted, "version")
      // Across keys: how many of them lost versions, and how many were looked at.
      let fromKeys =
        outcome.deleted == 0
        ? "of \(HumanFormat.count(keyCount, "key"))"
        : keysPruned == keyCount
          ? "from \(keyCount == 1 ? "the only key" : "all \(keyCount) keys")"
          : "from \(keysPruned) of \(HumanFormat.count(keyCount, "key"))"
      switch (key, keep) {
      case (let key?, let keep?) where outcome.keptByRetention.isEmpty:
        console.writeLine(
          "Deleted \(deletedVersions) of key \(TerminalText.key(key)); kept its newest "
            + "\(HumanFormat.count(keep, "version")).")
      case (let key?, _):
        console.writeLine("Deleted \(deletedVersions) of key \(TerminalText.key(key)).")
      case (nil, let keep?):
        console.writeLine(
          "Deleted \(deletedVersions) \(fromKeys); kept the newest \(keep) "
            + "of each\(protected.isEmpty ? "" : " (more where a key's retention says so)").")
      case (nil, nil):
        console.writeLine(
          "Deleted \(deletedVersions) \(fromKeys) by their recorded retention.")
      }
      for (key, retention) in protected {
        console.writeLine(
          "Key \(TerminalText.key(key)) kept \(RetentionText.human(retention)): its recorded retention.")
      }
    }
  }
}

/// How `pld-tool` shows a key's recorded retention.
enum RetentionText {
  /// "every version" or "the newest 100 versions".
  static func human(_ retention: HistoryRetention) -> String {
    switch retention {
    case .all: "every version"
    case .last(let count): "the newest \(HumanFormat.count(max(1, count), "version"))"
    }
  }

  /// In a table: "all", "last 100", or "-" when none is recorded.
  static func column(_ retention: HistoryRetention?) -> String {
    switch retention {
    case nil: "-"
    case .all: "all"
    case .last(let count)?: "last \(max(1, count))"
    }
  }

  /// `"all"` or the number of versions kept; `null` when none is recorded.
  static func json(_ retention: HistoryRetention?) -> JSONValue {
    switch retention {
    case nil: .null
    case .all: .string("all")
    case .last(let count)?: .integer(max(1, count))
    }
  }
}
