import PersistentLiveData

/// Issue 2: registering and removing many observers stays linear — the cost per observer at 10,000
/// must be about the cost at 1,000, for every way of removing them.
@MainActor
struct RegistrationBenchmark {
  let quick: Bool

  private var sizes: [Int] { quick ? [10, 100] : [1_000, 10_000] }
  private var rounds: Int { quick ? 2 : 9 }

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
    var samples = Array(
      repeating: Array(repeating: [Double](), count: Operation.allCases.count), count: sizes.count)
    for round in 0..<rounds {
      let order = Array(sizes.indices)
      for index in round.isMultiple(of: 2) ? order : order.reversed() {
        for (operation, nanoseconds) in try await sample(size: sizes[index]) {
          samples[index][operation.rawValue].append(nanoseconds / Double(sizes[index]))
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
      "observeForever(receiveCurrent: false) on one MutableLiveData<Int>; every sample registers anew.",
      "cancel() only schedules the removal on the main actor; the cleanup row includes running it.",
      "Median of \(rounds) rounds; the last column should stay near 1.00x.",
    ]
    report.print(section)
  }

  /// Registers `size` observers three times and removes them each way; returns total nanoseconds.
  private func sample(size: Int) async throws -> [(Operation, Double)] {
    var results: [(Operation, Double)] = []
    for removal in [Operation.removeInOrder, .removeReversed, .cancel] {
      let liveData = MutableLiveData(0)
      var observers: [Observer<Int>] = []
      observers.reserveCapacity(size)
      let registering = MonotonicClock.measure {
        for _ in 0..<size {
          observers.append(liveData.observeForever(receiveCurrent: false) { _ in })
        }
      }
      results.append((.register, registering))
      switch removal {
      case .removeInOrder:
        results.append(
          (removal, MonotonicClock.measure { observers.forEach { liveData.remove(observer: $0) } }))
      case .removeReversed:
        results.append(
          (removal, MonotonicClock.measure { observers.reversed().forEach { liveData.remove(observer: $0) } })
        )
      default:
        let start = MonotonicClock.now()
        observers.forEach { $0.cancel() }
        results.append((.cancel, MonotonicClock.nanoseconds(since: start)))
        try await drain(liveData)
        results.append((.cancelCleanup, MonotonicClock.nanoseconds(since: start)))
      }
      try BenchmarkError.expect(!liveData.hasObservers, "\(removal.label) left observers registered")
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
