/// The command line of `pld-bench`.
///
/// ```
/// pld-bench [--quick] [--json PATH] [--only GROUP]...
/// ```
struct Options {
  /// Tiny sizes, a few seconds in all: checks that every benchmark still runs, measures nothing.
  var quick = false
  /// Where to write the machine-readable results.
  var jsonPath: String?
  /// The groups to run; empty for all.
  var groups: Set<String> = []
  /// Print the usage and do nothing else.
  var help = false
  /// Internal: run as the child process of the memory benchmark (`--memory-probe KIND PATH`).
  var memoryProbe: (probe: MemoryBenchmark.Probe, path: String)?
  /// Internal: run as the writing child of the external benchmark (`--external-writer PATH COUNT SEED`).
  var externalWriter: (path: String, count: Int, seed: Int)?

  /// The groups, in the order a run takes them.
  static let groupNames = [
    "fsync", "delivery", "registration", "set", "attribution", "conditional", "encoding", "restore", "open",
    "history",
    "retention", "checkpoint", "memory", "groupcommit", "idle", "external", "external-scale", "metrics",
    "collections",
  ]

  static let usage = """
    usage: pld-bench [--quick] [--json PATH] [--only GROUP]...
           (swift run -c release --package-path Benchmarks pld-bench …)

      --quick        tiny sizes, a few seconds: checks the benchmarks run (CI); the numbers mean nothing
      --json PATH    also write every result as JSON to PATH
      --only GROUP   run only GROUP (repeatable): \(groupNames.joined(separator: ", "))
    """

  struct UsageError: Error, CustomStringConvertible {
    let description: String
  }

  static func parse(_ arguments: some Sequence<String>) throws -> Options {
    var options = Options()
    var remaining = arguments.makeIterator()
    while let argument = remaining.next() {
      switch argument {
      case "--help", "-h":
        options.help = true
      case "--quick":
        options.quick = true
      case "--json":
        guard let path = remaining.next() else { throw UsageError(description: "--json needs a path") }
        options.jsonPath = path
      case "--memory-probe":
        guard let kind = remaining.next().flatMap(MemoryBenchmark.Probe.init(rawValue:)),
          let path = remaining.next()
        else { throw UsageError(description: "--memory-probe needs none|library|raw and a path") }
        options.memoryProbe = (kind, path)
      case "--external-writer":
        guard let path = remaining.next(), let count = remaining.next().flatMap({ Int($0) }),
          let seed = remaining.next().flatMap({ Int($0) })
        else { throw UsageError(description: "--external-writer needs a path, a count and a seed") }
        options.externalWriter = (path, count, seed)
      case "--only":
        guard let group = remaining.next(), groupNames.contains(group) else {
          throw UsageError(description: "--only needs one of: \(groupNames.joined(separator: ", "))")
        }
        options.groups.insert(group)
      default:
        throw UsageError(description: "unknown argument \(argument)")
      }
    }
    return options
  }

  func runs(_ group: String) -> Bool { groups.isEmpty || groups.contains(group) }
}
