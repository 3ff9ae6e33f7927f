/// Order statistics of a sample of measurements.
///
/// ```swift
/// let latency = Summary(samples)
/// latency.median, latency.percentile(99.9)
/// ```
struct Summary {
  /// The measurements, ascending.
  let sorted: [Double]

  init(_ values: [Double]) {
    sorted = values.sorted()
  }

  var count: Int { sorted.count }
  var median: Double { percentile(50) }
  var minimum: Double { sorted.first ?? .nan }
  var mean: Double { sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count) }

  /// The `p`-th percentile (0…100), interpolating linearly between the two closest ranks.
  func percentile(_ p: Double) -> Double {
    guard let first = sorted.first else { return .nan }
    guard sorted.count > 1 else { return first }
    let rank = min(max(p, 0), 100) / 100 * Double(sorted.count - 1)
    let lower = Int(rank.rounded(.down))
    let upper = min(lower + 1, sorted.count - 1)
    let fraction = rank - Double(lower)
    return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
  }
}

/// The median of the round-by-round ratios `numerators[i] / denominators[i]` of two contenders measured
/// in the same rounds (``interleave(rounds:contenders:_:)``): a drift of the machine between rounds (the
/// disk, another process) moves both samples of a round and cancels out, where the ratio of the two
/// medians would take one contender's median from a slow round and the other's from a fast one.
///
/// ```swift
/// let ratio = pairedRatio(samples[library], samples[raw])   // e.g. 1.12
/// ```
func pairedRatio(_ numerators: [Double], _ denominators: [Double]) -> Double {
  Summary(zip(numerators, denominators).map { $0 / $1 }).median
}

/// Runs `rounds` rounds of the contenders `0..<contenders`, every contender once per round, reversing
/// the order every other round so that none always runs first (warm caches, pending checkpoints).
///
/// ```swift
/// interleave(rounds: 9, contenders: 2) { round, contender in samples[contender].append(run(contender)) }
/// ```
func interleave(
  rounds: Int, contenders: Int, _ body: (_ round: Int, _ contender: Int) throws -> Void
) rethrows {
  for round in 0..<rounds {
    let order = Array(0..<contenders)
    for contender in round.isMultiple(of: 2) ? order : order.reversed() {
      try body(round, contender)
    }
  }
}
