import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `pld-tool`: inspect, edit and watch a PersistentLiveData store from the command line.
@main
struct PLDTool: ParsableCommand {
  /// The tool's version, printed by `pld-tool --version`.
  static let toolVersion = "0.1.0"

  static let configuration = CommandConfiguration(
    commandName: "pld-tool",
    abstract: "Inspect, edit and watch a PersistentLiveData store.",
    usage: """
      pld-tool <subcommand> <database> [<arguments>] [--json]
      pld-tool --version
      """,
    discussion: """
      Read commands (inspect, keys, get, history, diff, export, verify, watch, backup) open the file \
      read-only and leave it byte-for-byte unchanged, also while an application writes to it. Write \
      commands (set, rollback, prune, import, delete) write new versions through the library, like an application's set. \
      set and import write only to an existing store unless --create is given. Every command accepts \
      --json for machine-readable output. Exit status: 0 on success; 1 on an error or when verify \
      finds a problem; 64 on a usage error (no command, an unknown command, or a missing, extra or \
      invalid argument or option).
      """,
    subcommands: [
      Inspect.self, Keys.self, Get.self, History.self, Diff.self, Set.self, Rollback.self, Prune.self,
      Export.self, Import.self, Verify.self, Watch.self, Backup.self, Delete.self, Serve.self,
    ] + postgresCommands
  )

  /// The commands that need PostgreSQL: none in a build without it (PLD_WITHOUT_POSTGRES=1).
  static var postgresCommands: [any ParsableCommand.Type] {
    #if canImport(PersistentLiveDataPostgres)
    [Replicas.self]
    #else
    []
    #endif
  }

  /// Only reached without a command, which ``execute(_:console:)`` answers first; kept as ArgumentParser's
  /// default for a command with subcommands.
  func run() throws {
    throw CleanExit.helpRequest(self)
  }

  /// The names the first argument may take: every subcommand's and ArgumentParser's `help`.
  static var commandNames: [String] {
    configuration.subcommands.map { $0._commandName } + ["help"]
  }

  /// The usage error of a command line that names no known command, or nil.
  ///
  /// ArgumentParser itself answers an empty command line with the help on standard output and status 0,
  /// and an unknown command with `Error: 2 unexpected arguments: 'frob', 'app.db'`: both are usage errors
  /// here (status 64). An empty command line prints the help on standard error; an unknown command is
  /// named, with the list of commands, the usage and the hint ArgumentParser gives for usage errors.
  static func missingOrUnknownCommand(_ arguments: [String], columns: Int?) -> String? {
    guard let first = arguments.first else { return helpMessage(columns: columns) }
    guard !first.hasPrefix("-"), !commandNames.contains(first) else { return nil }
    let commands = configuration.subcommands.map { $0._commandName }.joined(separator: ", ")
    let error = ValidationError(
      "Unknown command '\(TerminalText.escaped(first))'; the commands are \(commands).")
    return fullMessage(for: error, columns: columns)
  }

  /// The options that take a value: the word after one is its value, even one that starts with `-`
  /// (they are declared with `parsing: .unconditional`).
  static let valueOptions: Swift.Set<String> = [
    "--version", "--limit", "--keep", "--schema-version", "--since",
  ]

  /// `arguments` with the positional arguments moved after a `--` when one of them is a negative number
  /// (`rollback DB KEY -1`, `set DB KEY -0.5`), the options first.
  ///
  /// ArgumentParser takes a word that starts with `-` for an option (`-1`: a short option named `1`) and
  /// answers "Missing expected argument"; no option of pld-tool starts with `-` and a digit, so such a
  /// word can only be a value. After the `--` the command's own checks say what the argument takes
  /// ("<version> must be at least 1."). A command line that holds a `--` already, or no such word, is
  /// left as it is.
  static func separatingNegativeNumbers(_ arguments: [String]) -> [String] {
    guard arguments.count > 1, !arguments.contains("--") else { return arguments }
    var options: [String] = []
    var positionals: [String] = []
    var hasNegativeNumber = false
    var index = 1
    while index < arguments.count {
      let word = arguments[index]
      index += 1
      let second = word.dropFirst().first
      if word.first == "-", let second, second >= "0", second <= "9" {
        hasNegativeNumber = true
        positionals.append(word)
      } else if word.count > 1, word.first == "-" {
        options.append(word)
        if valueOptions.contains(word), index < arguments.count {
          options.append(arguments[index])
          index += 1
        }
      } else {
        positionals.append(word)
      }
    }
    guard hasNegativeNumber else { return arguments }
    return [arguments[0]] + options + ["--"] + positionals
  }

  /// Runs the command line of the process and exits with its status.
  static func main() {
    terminate(execute(Array(CommandLine.arguments.dropFirst()), console: .standard))
  }

  /// Parses and runs `arguments` (without the program name), writing to `console`, and returns the exit
  /// status — exactly what the `pld-tool` binary does, so tests can run commands in process.
  ///
  /// Help and `--version` go to standard output with status 0; errors go to standard error as
  /// ArgumentParser formats them (`Error: …`, with the usage for usage errors). No command at all is a
  /// usage error: the help goes to standard error, with status 64.
  static func execute(_ arguments: [String], console: Console) -> Int32 {
    Console.$current.withValue(console) {
      // `--version` is answered here rather than by ArgumentParser: with `CommandConfiguration.version`
      // or a root `--version` flag, ArgumentParser would take `--version` anywhere on the command line,
      // including the option of `get DB KEY --version 3`.
      if arguments == ["--version"] {
        console.writeLine(toolVersion)
        console.flush()
        return ExitCode.success.rawValue
      }
      let columns = console.handlesSignals ? nil : 80
      if let usage = missingOrUnknownCommand(arguments, columns: columns) {
        console.writeError(usage + "\n")
        console.flush()
        return ExitCode.validationFailure.rawValue
      }
      do {
        var command = try parseAsRoot(separatingNegativeNumbers(arguments))
        try command.run()
        console.flush()
        return ExitCode.success.rawValue
      } catch {
        let status = exitCode(for: error)
        let message = fullMessage(for: error, columns: columns)
        if !message.isEmpty {
          if status == .success {
            console.writeLine(message)
          } else {
            console.writeError(message + "\n")
          }
        }
        console.flush()
        return status.rawValue
      }
    }
  }
}

/// `exit(3)`, out of reach of ParsableCommand's own `exit(withError:)`.
private func terminate(_ status: Int32) -> Never {
  exit(status)
}
