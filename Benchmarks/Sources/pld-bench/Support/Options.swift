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

  static let groupNames = ["delivery", "registration", "set", "restore", "history", "retention"]

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
