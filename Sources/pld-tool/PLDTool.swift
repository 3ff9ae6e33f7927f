import ArgumentParser

@main
struct PLDTool: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "pld-tool",
    abstract: "Inspect, edit and watch a PersistentLiveData store.",
    version: "0.1.0"
  )
}
