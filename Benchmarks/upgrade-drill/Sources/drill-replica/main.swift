import Foundation

// drill-replica shared            — a replica of the drill's service (settings from DRILL_* variables)
// drill-replica sqlite PATH read  — an app opening a store file; `write` also writes the next value
let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "shared":
  exit(await runSharedReplica())
case "sqlite" where arguments.count == 4:
  exit(runSQLite(path: arguments[2], writes: arguments[3] == "write"))
default:
  FileHandle.standardError.write(Data("usage: drill-replica shared | sqlite PATH read|write\n".utf8))
  exit(2)
}
