import ArgumentParser
import Foundation
import PersistentLiveData

extension PLDTool {
  /// `import DB FILE`: writes every line of a JSON Lines file as a new version, all or nothing.
  struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Write every line of a JSON Lines file as a version of its key, all or nothing.",
      discussion: """
        Each line is an object with at least "key" (a string) and "value" (any JSON), as written by \
        export; "schemaVersion" (an integer, at least 1) is kept when present, otherwise the key's \
        current schema version is used (1 for a new key) — and a line without it for a key whose stored \
        versions have several schema versions is refused, as `set` without --schema-version is.

        A line that is not valid UTF-8, holds a lone surrogate escape (\\uD800 without its pair) or has \
        "writtenAt" without "version" is an error, as is any other malformed line.

        A key the store has never had is restored faithfully: when every line of the key has \
        "version" (an integer, at least 1, each one above the previous line's by one, as export writes \
        them) and "writtenAt" (as export writes it), each version keeps its number and time — importing \
        an export into an empty store gives back the same store. A key the store already has (or had: a \
        deleted key's numbers are never reused), lines without those fields, or --renumber: every line \
        becomes a new version of its key, numbered by the store and stamped with the current time. A key \
        whose lines have versions that cannot be kept (a gap, a wrong order, a number in the upper half \
        of the range) is renumbered too, with a note on standard error naming it.

        "author" and "reason" (strings, as export writes them) are kept: a restored version keeps the \
        exported ones, none when its line has none. Any other line records its own, or else --author \
        and --reason (the author defaulting to your login name).

        Lines are written in file order in one transaction: if any line is invalid, nothing is \
        written. Blank lines are skipped. The store must exist: a missing database file, or an empty \
        (0-byte) one, is an error, and nothing is created or changed, unless --create is given (an empty \
        file then becomes the store, with mode 0600). Pass - as FILE to read standard input.
        """)

    @OptionGroup var options: DatabaseOptions

    @Argument(help: ArgumentHelp("The JSON Lines file, or - for standard input.", valueName: "file"))
    var file: String

    @OptionGroup var creation: CreateOption

    @Flag(help: "Write every line as a new version, even of a key the store has never had.")
    var renumber = false

    @OptionGroup var attribution: AttributionOptions

    /// One line to import.
    struct Entry {
      var line: Int
      var key: String
      var value: Data
      /// The value schema version of the line, if it has one.
      var schemaVersion: Int?
      /// The exported version number and time, if the line has them (a faithful restore keeps them).
      var version: Int64?
      var writtenAtMilliseconds: Int64?
      /// The line's `author` and `reason`, if it has either.
      var attribution: WriteAttribution?
    }

    /// The highest exported version kept as it is: half the range.
    static let highestRestorableVersion = Int64.max / 2

    /// The keys of `entries` whose every line has a version and a time, each version one above the
    /// previous line's of the key (the first one any, below the last number there is): those a store
    /// without the key can take back faithfully. `renumbered` says why each key whose lines carry
    /// versions cannot be (keys without versions are not named: they were never an export's). Keys are
    /// told apart by their bytes, as the store tells them apart (`StoreKey`).
    static func restorableKeys(
      _ entries: [Entry]
    ) -> (restorable: Swift.Set<StoreKey>, renumbered: [(key: String, reason: String)]) {
      var last: [StoreKey: Int64] = [:]
      var refused: [StoreKey: String] = [:]
      var order: [String] = []
      for entry in entries where refused[entry.key] == nil {
        if last[entry.key] == nil { order.append(entry.key) }
        guard let version = entry.version, entry.writtenAtMilliseconds != nil else {
          refused[entry.key] = "line \(entry.line) has no \(entry.version == nil ? "version" : "writtenAt")"
          continue
        }
        if let previous = last[entry.key], version != previous + 1 {
          refused[entry.key] =
            version <= previous
            ? "line \(entry.line) has version \(version) after \(previous)"
            : "versions \(previous + 1) to \(version - 1) are missing before line \(entry.line)"
          continue
        }
        // A key near the end of the range could take a few more writes and then neither a write nor a
        // deletion (each takes a number); no store gets there by writing.
        guard version <= Self.highestRestorableVersion else {
          refused[entry.key] =
            "line \(entry.line) has version \(version), too close to the last number for later writes"
          continue
        }
        last[entry.key] = version
      }
      let hadVersions = Swift.Set(entries.lazy.filter { $0.version != nil }.map { StoreKey($0.key) })
      let renumbered = order.compactMap { key -> (key: String, reason: String)? in
        guard let reason = refused[key], hadVersions.contains(StoreKey(key)) else { return nil }
        return (key, reason)
      }
      return (Swift.Set(last.keys).subtracting(refused.keys), renumbered)
    }

    func run() throws {
      try StoreAccess.checkPresence(options.database, ifMissing: creation.ifMissing)
      let entries = try Self.parse(try readInput(), file: file)
      try checkSchemaVersions(of: entries)
      let store = try StoreAccess.store(options.database, ifMissing: creation.ifMissing)
      let progress = Progress("importing", total: entries.count)
      var latest: [(key: String, version: Int64)] = []
      var indexByKey: [StoreKey: Int] = [:]
      let (restorable, renumbered) =
        renumber ? ([], []) : Self.restorableKeys(entries)
      let reasons = Dictionary(
        renumbered.map { (StoreKey($0.key), $0.reason) }, uniquingKeysWith: { first, _ in first })
      var restored: Swift.Set<StoreKey> = []
      var notes: [String] = []
      do {
        try store.transaction {
          for entry in entries {
            var version: Int64
            do {
              if indexByKey[entry.key] == nil,
                restorable.contains(StoreKey(entry.key)) || reasons[entry.key] != nil,
                try store.headVersion(of: entry.key) == 0
              {
                if let reason = reasons[entry.key] {
                  notes.append(
                    "Key \(TerminalText.quoted(entry.key)) was given new versions: its exported ones could not "
                      + "be kept (\(reason)).")
                } else {
                  restored.insert(StoreKey(entry.key))
                }
              }
              if restored.contains(StoreKey(entry.key)), let exported = entry.version,
                let writtenAt = entry.writtenAtMilliseconds
              {
                try store.restoreJSON(
                  entry.value, forKey: entry.key, version: exported, writtenAtMilliseconds: writtenAt,
                  schemaVersion: entry.schemaVersion, attribution: entry.attribution)
                version = exported
              } else {
                version = try WriteAttribution.$current.withValue(
                  entry.attribution ?? attribution.attribution
                ) {
                  try store.setJSON(entry.value, forKey: entry.key, schemaVersion: entry.schemaVersion)
                }
              }
            } catch {
              throw CommandError(
                "Line \(entry.line) of \(TerminalText.quoted(file)) was not imported: \(error)")
            }
            if let index = indexByKey[entry.key] {
              latest[index].version = version
            } else {
              indexByKey[entry.key] = latest.count
              latest.append((entry.key, version))
            }
            progress.advance()
          }
        }
        progress.finish()
      } catch {
        progress.finish()
        try? store.close()
        throw error
      }
      try store.close()

      let console = Console.current
      for note in notes { console.writeError("Note: \(note)\n") }
      if options.json {
        console.writeJSON(
          .object([
            .init("imported", .integer(entries.count)),
            .init(
              "keys",
              .array(
                latest.map {
                  .object([
                    .init("key", .string($0.key)), .init("version", .integer($0.version)),
                    .init("restored", .bool(restored.contains(StoreKey($0.key)))),
                  ])
                })),
          ]))
        return
      }
      let restoredNote =
        restored.isEmpty
        ? ""
        : restored.count == latest.count
          ? " with their versions and times"
          : " (\(HumanFormat.count(restored.count, "key")) with their versions and times)"
      console.writeLine(
        "Imported \(HumanFormat.count(entries.count, "version")) of \(HumanFormat.count(latest.count, "key")) "
          + "from \(TerminalText.quoted(file))\(restoredNote).")
    }

    /// A line without `schemaVersion` is recorded with the schema version of its key's newest version, as
    /// `set` without `--schema-version` is: when the key's stored versions have several, that could tag the
    /// value with the wrong one, so the import is refused, naming the first such line. (Lines written by
    /// `export` always carry it.)
    private func checkSchemaVersions(of entries: [Entry]) throws {
      guard entries.contains(where: { $0.schemaVersion == nil }),
        FileManager.default.fileExists(atPath: options.database),
        let inspector = try? StoreAccess.inspector(options.database)
      else { return }
      defer { inspector.close() }
      var checked = Swift.Set<StoreKey>()
      for entry in entries where entry.schemaVersion == nil && checked.insert(StoreKey(entry.key)).inserted {
        let counts = try inspector.schemaVersionCounts(of: entry.key)
        guard counts.count > 1 else { continue }
        let versions = counts.keys.sorted().map(String.init).joined(separator: ", ")
        throw CommandError(
          "Line \(entry.line) of \(TerminalText.quoted(file)) was not imported: key "
            + "\(TerminalText.quoted(entry.key)) has versions of schema versions \(versions), and the line does "
            + "not say which its value has; give it a \"schemaVersion\" (export writes one on every line). "
            + "Nothing was imported.")
      }
    }

    private func readInput() throws -> String {
      if file == "-" { return try Self.text(of: try StandardInput.readData(), file: file) }
      // Read as a stream to its end: a pipe or FIFO (`import DB <(…)`, `/dev/stdin`) has no size to read up to.
      guard let handle = FileHandle(forReadingAtPath: file) else {
        let reason = FileManager.default.fileExists(atPath: file) ? "cannot be read" : "does not exist"
        throw CommandError("\(TerminalText.quoted(file)) \(reason).")
      }
      defer { try? handle.close() }
      let data: Data
      do {
        data = try handle.readToEnd() ?? Data()
      } catch {
        throw CommandError(
          "\(TerminalText.quoted(file)) cannot be read (\(Self.reason(error))). Nothing was imported.")
      }
      return try Self.text(of: data, file: file)
    }

    /// Why a read failed, in words (`Is a directory`), from the POSIX error underneath.
    static func reason(_ error: any Error) -> String {
      if let code = (error as NSError).userInfo[NSUnderlyingErrorKey].flatMap({ ($0 as? NSError)?.code }) {
        return String(cString: strerror(Int32(code)))
      }
      return (error as NSError).localizedDescription
    }

    /// The text of `data`, or an error naming the first line that is not valid UTF-8 (decoding it
    /// anyway would store U+FFFD in place of its bytes, in a key or a value, without a word).
    static func text(of data: Data, file: String) throws -> String {
      if let text = String(validating: data, as: UTF8.self) { return text }
      var lineNumber = 0
      for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        lineNumber += 1
        if String(validating: line, as: UTF8.self) == nil {
          throw CommandError(
            "Line \(lineNumber) of \(TerminalText.quoted(file)) is not valid UTF-8 text; nothing was imported."
          )
        }
      }
      throw CommandError("\(TerminalText.quoted(file)) is not valid UTF-8 text; nothing was imported.")
    }

    /// The first `\u` escape of `line`, a JSON text, that is half of a surrogate pair without its other
    /// half (`\uD800` alone): no Unicode character, and stored as U+FFFD if it were let through.
    static func loneSurrogate(in line: Substring) -> String? {
      var bytes = line.utf8.makeIterator()
      var pendingHigh: String?
      while let byte = bytes.next() {
        guard byte == UInt8(ascii: "\\") else {
          if let pendingHigh { return pendingHigh }
          continue
        }
        guard let escaped = bytes.next() else { break }
        guard escaped == UInt8(ascii: "u") else {
          if let pendingHigh { return pendingHigh }
          continue
        }
        var hex: [UInt8] = []
        while hex.count < 4, let digit = bytes.next() { hex.append(digit) }
        let text = String(decoding: hex, as: UTF8.self)
        guard let unit = UInt16(text, radix: 16) else { continue }
        let escape = "\\u" + text
        switch unit {
        case 0xD800...0xDBFF:
          if let pendingHigh { return pendingHigh }
          pendingHigh = escape
        case 0xDC00...0xDFFF:
          if pendingHigh == nil { return escape }
          pendingHigh = nil
        default:
          if let pendingHigh { return pendingHigh }
        }
      }
      return pendingHigh
    }

    /// The entries of a JSON Lines text, or an error naming the first bad line.
    static func parse(_ text: String, file: String) throws -> [Entry] {
      var entries: [Entry] = []
      var lineNumber = 0
      // "\r\n" is one Character in Swift: split on both forms of line end.
      for rawLine in text.split(
        omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
      {
        lineNumber += 1
        let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
        if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
        func failure(_ reason: String) -> CommandError {
          CommandError("Line \(lineNumber) of \(TerminalText.quoted(file)) \(reason).")
        }
        let object: JSONValue
        do {
          object = try JSONParser.parse(String(line), envelope: 1)
        } catch {
          throw failure("is not valid JSON: \(error)")
        }
        if let escape = loneSurrogate(in: line) {
          throw failure(
            "has \(escape) without the other half of its surrogate pair, which is no character (it would "
              + "be stored as U+FFFD)")
        }
        guard case .object = object else {
          throw failure("is not a JSON object but \(object.kind == "array" ? "an" : "a") \(object.kind)")
        }
        guard case .string(let key)? = object["key"] else { throw failure("has no \"key\" string") }
        guard !key.isEmpty else { throw failure("has an empty \"key\"") }
        guard let value = object["value"] else { throw failure("has no \"value\"") }
        if object["rawPayload"] != nil {
          throw failure("holds a payload that was not valid JSON in the exported store")
        }
        var schemaVersion: Int?
        if let member = object["schemaVersion"] {
          guard case .number(let text) = member, let number = Int(text), number >= 1 else {
            throw failure("has a \"schemaVersion\" that is not an integer of at least 1")
          }
          schemaVersion = number
        }
        var version: Int64?
        if let member = object["version"] {
          guard case .number(let text) = member, let number = Int64(text), number >= 1 else {
            throw failure("has a \"version\" that is not an integer of at least 1")
          }
          version = number
        }
        var writtenAt: Int64?
        if let member = object["writtenAt"] {
          guard case .string(let text) = member, let milliseconds = HumanFormat.milliseconds(iso8601: text)
          else {
            throw failure("has a \"writtenAt\" that is not a time like 2026-01-31T12:00:00.000Z")
          }
          writtenAt = milliseconds
          // A time is kept only with its version number (a faithful restore): alone, it would be dropped.
          guard version != nil else {
            throw failure(
              "has a \"writtenAt\" without a \"version\"; a time is kept only with its version, as export "
                + "writes them: add the \"version\" or remove the \"writtenAt\"")
          }
        }
        var parts: [String: String] = [:]
        for name in ["author", "reason"] {
          guard let member = object[name] else { continue }
          guard case .string(let text) = member else {
            throw failure("has an \"\(name)\" that is not a string")
          }
          parts[name] = text
        }
        let attribution = WriteAttribution(storedAuthor: parts["author"], reason: parts["reason"])
        do {
          try attribution?.validate()
        } catch let error as WriteAttributionTooLong {
          throw failure(
            "has an \"\(error.field.name)\" of \(error.byteCount) bytes of UTF-8; the limit is \(error.limit) bytes"
          )
        }
        entries.append(
          Entry(
            line: lineNumber, key: key, value: Data(value.compact.utf8), schemaVersion: schemaVersion,
            version: version, writtenAtMilliseconds: writtenAt, attribution: attribution))
      }
      return entries
    }
  }
}
