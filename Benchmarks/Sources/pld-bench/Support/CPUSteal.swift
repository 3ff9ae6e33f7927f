import Foundation

/// The share of CPU time the hypervisor gave to other guests while this virtual machine wanted it
/// ("steal" in `/proc/stat`), between two readings. On a shared host it comes and goes within minutes,
/// and it moves multi-threaded contenders (the group commit's writer and callers, which hand work from
/// thread to thread) more than single-threaded ones: every group's table is followed by its reading.
///
/// ```swift
/// let before = CPUSteal.read()
/// runTheGroup()
/// if let share = CPUSteal.share(since: before) { print("steal: \(share * 100) %") }
/// ```
enum CPUSteal {
  /// The aggregate `cpu` line of `/proc/stat`: ticks stolen, and ticks of every kind; nil off Linux.
  struct Reading {
    let steal: Double
    let total: Double
  }

  static func read() -> Reading? {
    guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
      let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
    else { return nil }
    // user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
    let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard ticks.count >= 8 else { return nil }
    return Reading(steal: ticks[7], total: ticks.prefix(8).reduce(0, +))
  }

  /// The stolen share of all CPU time since `before` (0…1); nil without readings or without time passing.
  static func share(since before: Reading?) -> Double? {
    guard let before, let now = read(), now.total > before.total else { return nil }
    return (now.steal - before.steal) / (now.total - before.total)
  }
}
