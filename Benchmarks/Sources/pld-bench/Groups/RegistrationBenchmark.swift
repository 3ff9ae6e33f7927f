import PersistentLiveData

/// Issue 2: registering and removing many observers stays linear — the cost per observer at 10,000
/// must be about the cost at 1,000, for every way of removing them.
@MainActor
struct RegistrationBenchmark {
  let quick: Bool

  private var sizes: [Int] { quick ? [10, 100] : [1_000, 10_000] }
  private var rounds: Int { quick ? 2 : 15 }
  /// Observers registered over the whole group: three registrations per size per round.
  private var registeredObservers: Int {
    rounds * sizes.reduce(0) { $0 + 3 * lists(size: $1) * $1 }
  }

  /// What a sample measures, in table order.
  enum Operation: Int, CaseIterable {
    case register, removeInOrder, removeReversed, cancel, cancelCleanup

    var label: String {
      switch self {
      case .register: "observeForever (register)"
      case .removeInOrder: "remove(observer:), registration order"
      case .removeReversed: "remove(observer:), reverse order"
      case .cancel: "cancel() calls"
      case .cancelCleanup: "cancel() + main-actor cleanup"
      }
    }

    var key: String { String(describing: self) }
  }

  func run(_ report: Report) async throws {
    // samples[size][operation]
    let residentBefore = residentMegabytes()
    var samples = Array(
      repeating: Array(repeating: [Double](), count: Operation.allCases.count), count: sizes.count)
    for round in 0..<rounds {
      let order = Array(sizes.indices)
      for index in round.isMultiple(of: 2) ? order : order.reversed() {
        for (operation, nanoseconds) in try await sample(size: sizes[index]) {
          samples[index][operation.rawValue].append(nanoseconds)
        }
      }
    }

    let names = sizes.map { "ns/observer at \(Format.count($0))" }
    var section = Section(
      "Registration and removal: cost per observer (issue 2: flat, no quadratic removal)",
      header: ["operation"] + names + ["\(Format.count(sizes[1])) / \(Format.count(sizes[0]))"])
    for operation in Operation.allCases {
      let medians = sizes.indices.map { Summary(samples[$0][operation.rawValue]).median }
      let growth = medians[1] / medians[0]
      section.rows.append([operation.label] + medians.map(Format.value) + [Format.ratio(growth)])
      for (size, median) in zip(sizes, medians) {
        report.record("registration", operation.key, "perObserverAt\(size)", median, unit: "ns")
      }
      report.record("registration", operation.key, "growth", growth, unit: "x")
    }
    section.notes = [
      "observeForever(receiveCurrent: false) on MutableLiveData<Int>s of N observers; every sample registers anew,",
      "about 10,000 observers in all (10 LiveData of 1,000, or 1 of 10,000).",
      "cancel() only schedules the removal on the main actor; the cleanup row includes running it.",
      "Median of \(rounds) rounds; the last column should stay near 1.00x.",
    ]
    if let before = residentBefore, let after = residentMegabytes() {
      let perObserver = (after - before) * 1_048_576 / Double(registeredObservers)
      section.notes.append(
        "Resident memory grew by \(Format.value(after - before)) MB over the group (\(Format.value(perObserver)) B per "
          + "observer registered), although every observer and LiveData was released.")
      report.record("registration", "memory", "residentGrowth", after - before, unit: "MB")
      report.record("registration", "memory", "residentGrowthPerObserver", perObserver, unit: "B")
    }
    report.print(section)
  }

  /// How many LiveData of `size` observers one sample uses, so that every sample handles about the
  /// same number of observers whatever the size (short samples are at the mercy of noise).
  private func lists(size: Int) -> Int { max(1, (quick ? 100 : 10_000) / size) }

  /// Registers `size` observers on each of ``lists(size:)`` LiveData, three times, and removes them
  /// each way; returns nanoseconds per observer.
  private func sample(size: Int) async throws -> [(Operation, Double)] {
    var results: [(Operation, Double)] = []
    let count = lists(size: size)
    let observerCount = Double(count * size)
    for removal in [Operation.removeInOrder, .removeReversed, .cancel] {
      let lists = (0..<count).map { _ in MutableLiveData(0) }
      var observers: [[Observer<Int>]] = lists.map { _ in [] }
      observers.indices.forEach { observers[$0].reserveCapacity(size) }
      let registering = MonotonicClock.measure {
        for (index, liveData) in lists.enumerated() {
          for _ in 0..<size {
            observers[index].append(liveData.observeForever(receiveCurrent: false) { _ in })
          }
        }
      }
      results.append((.register, registering / observerCount))
      switch removal {
      case .removeInOrder:
        let elapsed = MonotonicClock.measure {
          for (liveData, registered) in zip(lists, observers) {
            registered.forEach { liveData.remove(observer: $0) }
          }
        }
        results.append((removal, elapsed / observerCount))
      case .removeReversed:
        let elapsed = MonotonicClock.measure {
          for (liveData, registered) in zip(lists, observers) {
            registered.reversed().forEach { liveData.remove(observer: $0) }
          }
        }
        results.append((removal, elapsed / observerCount))
      default:
        let start = MonotonicClock.now()
        observers.joined().forEach { $0.cancel() }
        results.append((.cancel, MonotonicClock.nanoseconds(since: start) / observerCount))
        for liveData in lists { try await drain(liveData) }
        results.append((.cancelCleanup, MonotonicClock.nanoseconds(since: start) / observerCount))
      }
      try BenchmarkError.expect(
        !lists.contains { $0.hasObservers }, "\(removal.label) left observers registered")
    }
    return results
  }

  /// Lets the main actor run the removals that `cancel()` scheduled.
  private func drain(_ liveData: LiveData<Int>) async throws {
    var yields = 0
    while liveData.hasObservers {
      await Task.yield()
      yields += 1
      try BenchmarkError.expect(yields < 10_000_000, "cancelled observers were never removed")
    }
  }
}
