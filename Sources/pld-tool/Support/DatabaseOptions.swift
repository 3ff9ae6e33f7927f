import ArgumentParser

/// The options every command shares: the database file and `--json`.
struct DatabaseOptions: ParsableArguments {
  @Argument(help: "The store's database file.")
  var database: String

  @Flag(help: "Print machine-readable JSON on standard output.")
  var json = false
}
