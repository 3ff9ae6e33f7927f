import Foundation
import PersistentLiveData

/// The command-line to-do list: `pld-todo [add TEXT | done N | undo | history | list] [--db PATH]`.
///
/// Without a command it records this run and shows the list, the observers at work and the history,
/// so that running it twice shows the state continuing.
@MainActor
final class TodoApp: LifecycleOwner {
  let scopeLifecycle = ScopeLifecycle()
  let store: PersistentStore
  let list: PersistentLiveData<TodoList>
  let runs: PersistentLiveData<Int>

  init(databasePath: String) throws {
    store = try PersistentStore(path: databasePath)
    list = try store.liveData("todo.list", default: TodoList())
    runs = try store.liveData("todo.runs", default: 0)
  }

  /// Binds the screen: while this owner's scope is active, every committed version is printed.
  /// `receiveCurrent: false`: the observer reports changes, not the state at startup.
  func bindObservers() {
    scopeLifecycle.activate()
    list.observe(owner: self, receiveCurrent: false) { app, list in
      print("  ↳ observer: list is now version \(app.list.version) (\(list.summary))")
    }
  }

  func run(_ arguments: [String]) throws {
    bindObservers()
    defer { scopeLifecycle.deactivate() }
    switch arguments.first {
    case nil:
      try demo()
    case "add":
      let title = arguments.dropFirst().joined(separator: " ")
      guard !title.isEmpty else { throw UsageError("add needs a title: pld-todo add Buy milk") }
      try list.update { $0.items.append(TodoItem(title: title)) }
      showList()
    case "done":
      guard let number = arguments.dropFirst().first.flatMap(Int.init), number >= 1 else {
        throw UsageError("done needs an item number: pld-todo done 2")
      }
      try list.update { list in
        if number <= list.items.count { list.items[number - 1].done = true }
      }
      showList()
    case "undo":
      guard list.version > 1 else {
        print("Nothing to undo.")
        return
      }
      try list.rollback(to: list.version - 1)
      print("Restored the content of version \(list.version - 2) as version \(list.version).")
      showList()
    case "history":
      try showHistory(limit: nil)
    case "list":
      showList()
    default:
      throw UsageError("unknown command \(arguments[0]); try add, done, undo, history or list")
    }
  }

  /// The default run: count the run, add an item, tick an old one, show list and history.
  private func demo() throws {
    let run = try runs.update { $0 += 1 }
    print("Run #\(run) — state kept in \(store.path ?? "memory")\n")
    try list.update { list in
      list.items.append(TodoItem(title: "Item added by run #\(run)"))
      if let firstOpen = list.items.indices.first(where: { !list.items[$0].done }), list.items.count > 2 {
        list.items[firstOpen].done = true
      }
    }
    showList()
    print("")
    try showHistory(limit: 3)
    print("\nRun it again and the list continues. Try also: add TEXT, done N, undo, history.")
    print("Inspect the store with: swift run pld-tool history \(store.path ?? "") todo.list")
  }

  private func showList() {
    print("To-do list (version \(list.version)):")
    print(list.value.rendered())
  }

  private func showHistory(limit: Int?) throws {
    let versions = try list.history(limit: limit)
    print("History\(limit.map { " (last \($0))" } ?? ""):")
    let formatter = ISO8601DateFormatter()
    for entry in versions {
      print("  v\(entry.version)  \(formatter.string(from: entry.writtenAt))  \(entry.value.summary)")
    }
  }
}

struct UsageError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
