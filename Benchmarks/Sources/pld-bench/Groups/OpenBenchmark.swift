import PersistentLiveData

/// Opening a large store must cost what opening an empty one does: open a store file of 100,000 keys
/// (2,000 in quick mode) with the default options and read 3 of its keys, against opening an empty
/// store (alone, and asked for the same 3 keys, which it does not hold), and against raw SQLite opening
/// the same file and reading those 3 keys' latest rows by primary key. Contenders interleaved round by
/// round.
@MainActor
struct OpenBenchmark {
  let quick: Bool
  let scratch: ScratchDirectory

  private var keys: Int { quick ? 2_000 : 100_000 }
  private var rounds: Int { quick ? 2 : 9 }
  /// Opens per sample: an open lasts about a millisecond, a sample ten.
  private var repetitions: Int { quick ? 2 : 10 }

  /// The contenders, in table order.
  private enum Contender: Int, CaseIterable {
    case empty, emptyReads, library, raw

    var label: String {
      switch self {
      case .empty: "library: open an empty store"
      case .emptyReads: "library: open an empty store + the same 3 keys"
      case .library: "library: open + liveData + value of 3 keys"
      case .raw: "raw SQLite: open + 3 latest rows by primary key + decode"
      }
    }

    /// The case name in the JSON results.
    func name(keys: Int) -> String {
      switch self {
      case .empty: "empty"
      case .emptyReads: "empty + 3 reads"
      case .library: "library \(keys) keys"
      case .raw: "raw \(keys) keys"
      }
    }
  }

  func run(_ report: Report) throws {
    let emptyPath = try scratch.freshFile("open-empty.db")
    try PersistentStore(path: emptyPath).close()
    var path = ""
    let prefill = try MonotonicClock.measure { path = try makeStore() }
    let megabytes = fileSize(path) / 1e6

    var samples = Array(repeating: [Double](), count: Contender.allCases.count)
    try interleave(rounds: rounds, contenders: Contender.allCases.count) { _, index in
      let contender = Contender.allCases[index]
      var total = 0.0
      for _ in 0..<repetitions {
        total += try open(contender == .empty || contender == .emptyReads ? emptyPath : path, contender)
      }
      samples[index].append(total / Double(repetitions))
    }

    let count = Format.count(keys)
    var section = Section(
      "Open: a store of \(count) keys + read 3 of them, against an empty store (≤ 5 ms, ≤ 1.1x empty)",
      header: ["contender", "keys in the file", "ms per open", "library \(count) keys / this"])
    let medians = samples.map { Summary($0).median }
    let library = samples[Contender.library.rawValue]
    /// The library's time over `contender`'s, round by round (see `pairedRatio`).
    func ratio(to contender: Contender) -> Double { pairedRatio(library, samples[contender.rawValue]) }
    for contender in Contender.allCases {
      let median = medians[contender.rawValue]
      section.add(
        contender.label, contender == .empty || contender == .emptyReads ? "0" : count,
        Format.value(median / 1e6),
        contender == .library ? "" : Format.ratio(ratio(to: contender)))
      report.record("open", contender.name(keys: keys), "median", median / 1e6, unit: "ms")
    }
    let name = Contender.library.name(keys: keys)
    report.record("open", name, "ratioToEmpty", ratio(to: .empty), unit: "x")
    report.record("open", name, "ratioToRaw", ratio(to: .raw), unit: "x")
    report.record("open", name, "ratioToEmptyWithReads", ratio(to: .emptyReads), unit: "x")
    report.record(
      "open", name, "ratioOfMedians", medians[Contender.library.rawValue] / medians[Contender.empty.rawValue],
      unit: "x")
    report.record("open", "\(keys) keys", "prefill", prefill / 1e9, unit: "s")
    report.record("open", "\(keys) keys", "fileSize", megabytes, unit: "MB")
    section.notes = [
      "One version per key, a ~115 B profile each: \(Format.value(megabytes)) MB written by the library in 10 transactions",
      "(.normal) in \(Format.value(prefill / 1e9)) s; the empty store was created by the library and closed. Both open with the",
      "default StoreOptions(); the keys read are the first, the middle and the last (on the empty store: absent,",
      "so each live value starts at its default — the same calls, with nothing per key in the file). Raw SQLite prepares",
      "SELECT payload … WHERE key = ? ORDER BY version DESC LIMIT 1 and decodes. Closing is not timed.",
      "Median of \(rounds) rounds of \(repetitions) opens each; a ratio is the median of the rounds' own ratios.",
      "The restore table reads every key; the memory table opens 1M rows.",
    ]
    report.print(section)
    scratch.remove(database: emptyPath)
    scratch.remove(database: path)
  }

  /// Writes the store file of `keys` keys, one version each, through the library, in 10 transactions.
  private func makeStore() throws -> String {
    try scratch.profileStore(named: "open-\(keys).db", keys: keys, transactions: 10)
  }

  private static func key(_ index: Int) -> String { Profile.key(index) }

  /// The keys read: the first, the middle and the last written.
  private var readIndices: [Int] { [0, keys / 2, keys - 1] }

  /// Opens the file at `path` once (and reads the 3 keys); returns the nanoseconds it took, closing
  /// excluded.
  private func open(_ path: String, _ contender: Contender) throws -> Double {
    let expected = readIndices.map(Profile.sample)
    switch contender {
    case .empty:
      var store: PersistentStore?
      let elapsed = try MonotonicClock.measure { store = try PersistentStore(path: path) }
      try store?.close()
      return elapsed
    case .library, .emptyReads:
      var store: PersistentStore?
      var values: [Profile] = []
      let elapsed = try MonotonicClock.measure {
        let opened = try PersistentStore(path: path)
        for index in readIndices {
          values.append(try opened.liveData(Self.key(index), default: Profile.sample(0)).value)
        }
        store = opened
      }
      let wanted = contender == .library ? expected : Array(repeating: Profile.sample(0), count: 3)
      try BenchmarkError.expect(values == wanted, "the library read wrong values: \(values)")
      try store?.close()
      return elapsed
    case .raw:
      var values: [String: Profile] = [:]
      var database: RawDatabase?
      let elapsed = try MonotonicClock.measure {
        let opened = try RawDatabase(path: path)
        values = try RawRestore.latestValues(Profile.self, keys: readIndices.map(Self.key), in: opened)
        database = opened
      }
      try BenchmarkError.expect(
        database != nil && readIndices.map({ values[Self.key($0)] }) == expected,
        "raw SQLite read \(values.count) of 3 keys, or wrong values")
      return elapsed  // the connection closes now, untimed like the library's close()
    }
  }
}
