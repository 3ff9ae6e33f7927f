import PersistentLiveData

/// Issue 3: starting an app — open a store file of N keys and create every key's `PersistentLiveData`
/// (which reads and decodes its latest value), against raw SQLite opening the same file, reading the
/// latest row of every key with one query and decoding it.
@MainActor
struct RestoreBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var sizes: [Int] { quick ? [1, 50] : [1, 100, 5_000, 10_000] }
  private var rounds: Int { quick ? 2 : 9 }

  /// The contenders, in table order.
  private enum Contender: Int, CaseIterable {
    case library, libraryWithCheck, raw

    var label: String {
      switch self {
      case .library: "library (default options)"
      case .libraryWithCheck: "library, verifiesIntegrityOnOpen = true"
      case .raw: "raw SQLite"
      }
    }
  }

  func run(_ report: Report) throws {
    var section = Section(
      "Restore: open a store and read + decode every key (issue 3: 5,000 keys ≤ 1.5x; issue 7: 1.1x)",
      header: ["keys", "contender", "ms", "µs/key", "ratio to raw"])
    for keys in sizes {
      let path = try makeStore(keys: keys)
      // Small files restore in microseconds: repeat them so a sample lasts about a millisecond or more.
      let repetitions = max(1, 100 / keys)
      var samples = Array(repeating: [Double](), count: Contender.allCases.count)
      try interleave(rounds: rounds, contenders: Contender.allCases.count) { _, index in
        let contender = Contender.allCases[index]
        var total = 0.0
        for _ in 0..<repetitions { total += try restore(path: path, keys: keys, contender) }
        samples[index].append(total / Double(repetitions))
      }
      let rawSamples = samples[Contender.raw.rawValue]
      for contender in Contender.allCases {
        let median = Summary(samples[contender.rawValue]).median
        let pairedToRaw = pairedRatio(samples[contender.rawValue], rawSamples)
        let ratio = contender == .raw ? "" : Format.ratio(pairedToRaw)
        section.add(
          Format.count(keys), contender.label, Format.value(median / 1e6),
          Format.value(median / 1e3 / Double(keys)),
          ratio)
        let name = "\(contender) \(keys) keys"
        report.record("restore", name, "median", median / 1e6, unit: "ms")
        report.record("restore", name, "perKey", median / 1e3 / Double(keys), unit: "us")
        if contender != .raw {
          report.record("restore", name, "ratioToRaw", pairedToRaw, unit: "x")
          report.record(
            "restore", name, "ratioOfMedians", median / Summary(rawSamples).median, unit: "x")
        }
      }
      scratch.remove(database: path)
    }
    section.notes = [
      "One version per key, a ~115 B profile each; a store file written by the library. The library row",
      "includes PersistentStore.init (validation, migrations check; PRAGMA quick_check too in the second row)",
      "and liveData(_:default:) for every key, which reads its latest row by the primary key;",
      "raw opens the file and runs SELECT key, max(version), payload … GROUP BY key + JSONDecoder.",
      "Closing is not timed. Median of \(rounds) rounds (files of < 100 keys are restored 100/N times per sample);",
      "the ratio is the median of the \(rounds) rounds' own ratios (library and raw restore the file one after the",
      "other in each round), which a drift of the machine between rounds does not move.",
    ]
    report.print(section)
  }

  /// Writes a store file of `keys` keys, one version each, through the library.
  private func makeStore(keys: Int) throws -> String {
    try scratch.profileStore(named: "restore-\(keys).db", keys: keys, transactions: 1)
  }

  private static func key(_ index: Int) -> String { Profile.key(index) }

  /// Restores the file once; returns the nanoseconds it took (closing excluded).
  private func restore(path: String, keys: Int, _ contender: Contender) throws -> Double {
    switch contender {
    case .library, .libraryWithCheck:
      var options = StoreOptions()
      options.verifiesIntegrityOnOpen = contender == .libraryWithCheck
      var restored: [PersistentLiveData<Profile>] = []
      restored.reserveCapacity(keys)
      var store: PersistentStore?
      let elapsed = try MonotonicClock.measure {
        let opened = try PersistentStore(path: path, options: options)
        for index in 0..<keys {
          restored.append(try opened.liveData(Self.key(index), default: Profile.sample(0)))
        }
        store = opened
      }
      try BenchmarkError.expect(restored.last?.version == 1, "the library restored no stored version")
      try store?.close()
      return elapsed
    case .raw:
      var values: [String: Profile] = [:]
      var database: RawDatabase?
      let elapsed = try MonotonicClock.measure {
        let opened = try RawDatabase(path: path)
        values = try RawRestore.latestValues(Profile.self, in: opened)
        database = opened
      }
      try BenchmarkError.expect(
        database != nil && values.count == keys, "raw SQLite restored \(values.count) of \(keys) keys")
      return elapsed  // the connection closes now, untimed like the library's close()
    }
  }
}
