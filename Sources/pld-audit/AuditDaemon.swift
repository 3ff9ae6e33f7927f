import Foundation
import PersistentLiveData

/// `pld-audit`: a long-running example. It keeps an audit log of every version of a key — including
/// those written by other processes (`pld-tool set` from another shell) — with who wrote each one and why
/// (its `WriteAttribution`), with `changes(since:)` off the main actor, resumes after a restart where it
/// stopped, shows the latest value through a lifecycle-bound
/// main-actor observer, and exits cleanly on SIGINT or SIGTERM.
///
/// ```sh
/// swift run pld-audit --db /tmp/flags.db &
/// swift run pld-tool set /tmp/flags.db flags '{"beta": true}' --reason "INC-42"
/// # audit: v1 at 2026-11-28T00:40:12Z by alice (INC-42): {"beta":true}
/// kill %1
/// ```
@main @MainActor
struct AuditDaemon {
  static func main() async {
    let options = Options(CommandLine.arguments.dropFirst())
    do {
      try await run(options)
    } catch {
      Output.error("pld-audit: \(error)")
      exit(1)
    }
  }

  /// The shape of a daemon built on the library: an async main (so main-actor observers run), work off
  /// the main actor in tasks, a stop signal awaited, then everything cancelled and the store closed.
  static func run(_ options: Options) async throws {
    let stop = StopSignal()  // installed first: a signal from now on stops the daemon cleanly
    let store = try PersistentStore(path: options.database)
    let flags = try store.liveData(options.key, default: [String: Bool]())
    // The audit's position is kept in the store itself, so a restart resumes without repeating a line.
    let position = try store.liveData("pld-audit.position.\(options.key)", default: Int64(0))

    Output.line("pld-audit: auditing \(options.key) in \(options.database) after version \(position.value)")
    let monitor = FlagsMonitor()
    flags.observe(owner: monitor) { _, value in
      Output.line("observer: \(options.key) is now version \(flags.version): \(Output.json(value))")
    }
    monitor.scopeLifecycle.activate()

    let audit = Task.detached { () throws -> Int64 in
      var last = position.value
      while true {
        do {
          for try await change in flags.changes(since: last) {
            let time = change.writtenAt.formatted(.iso8601)
            let by = Output.attribution(change.attribution)
            Output.line("audit: v\(change.version) at \(time) \(by): \(Output.json(change.value))")
            try record(change.version, in: position)
            last = change.version
          }
          return last
        } catch PersistentLiveDataError.undecodable(_, let version, _) where version > last {
          // A version this type cannot read (another program wrote another shape): it stays stored,
          // untouched. An audit must not skip it silently, so it records it from `historyEntry(at:)`,
          // which reads any version without throwing for its value, then resumes after it.
          let entry = try flags.historyEntry(at: version)
          let time = entry.map { $0.writtenAt.formatted(.iso8601) } ?? "an unknown time"
          let by = Output.attribution(entry?.attribution)
          let reason = entry.map { entry in
            if case .failure(let error) = entry.result { "\(error)" } else { "decodes now" }
          }
          Output.line("audit: v\(version) at \(time) \(by): not readable as flags (\(reason ?? "pruned"))")
          try record(version, in: position)
          last = version
        }
      }
    }

    let reason = await stop.wait(orUntil: audit)
    audit.cancel()
    let last: Int64
    do {
      last = try await audit.value
    } catch {
      // Versions pruned before they were audited, or a storage error: say so and stop, since an audit
      // must not skip a version.
      monitor.scopeLifecycle.deactivate()
      try store.close()
      throw error
    }
    monitor.scopeLifecycle.deactivate()
    try store.close()
    Output.line("pld-audit: stopped (\(reason)) after version \(last)")
  }

  /// Records the audit's position; like every write, it says who made it and why.
  nonisolated static func record(_ version: Int64, in position: PersistentLiveData<Int64>) throws {
    try WriteAttribution.$current.withValue(WriteAttribution(author: "pld-audit", reason: "audited")) {
      try position.set(version)
    }
  }
}

/// The owner of the main-actor observer: active while the daemon runs.
@MainActor
final class FlagsMonitor: LifecycleOwner {
  let scopeLifecycle = ScopeLifecycle()
}

/// `--db PATH` (default `$XDG_DATA_HOME/pld-audit/flags.db`) and `--key KEY` (default `flags`).
struct Options: Sendable {
  var database: String
  var key = "flags"

  init(_ arguments: ArraySlice<String>) {
    let environment = ProcessInfo.processInfo.environment
    let dataHome =
      environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? "\(NSHomeDirectory())/.local/share"
    database = "\(dataHome)/pld-audit/flags.db"
    var remaining = arguments[...]
    while let flag = remaining.popFirst() {
      switch (flag, remaining.popFirst()) {
      case ("--db", let value?): database = value
      case ("--key", let value?): key = value
      default:
        Output.error("usage: pld-audit [--db PATH] [--key KEY]")
        exit(64)
      }
    }
  }
}
