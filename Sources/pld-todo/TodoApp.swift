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
    var options = StoreOptions()
    options.applicationIdentifier = "pld-todo"  // another app's store at this path is refused, not used
    store = try PersistentStore(path: databasePath, options: options)
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

  /// Runs `command`. A command that cannot do what it was asked (an item that does not exist, nothing to
  /// undo) throws ``TodoError`` before anything is written.
  func run(_ command: TodoCommand) throws {
    bindObservers()
    defer { scopeLifecycle.deactivate() }
    switch command {
    case .demo:
      try demo()
    case .add(let title):
      try list.update { $0.items.append(TodoItem(title: title)) }
      showList()
    case .done(let number):
      try markDone(number)
    case .undo:
      guard list.version > 1 else { throw TodoError.nothingToUndo }
      try list.rollback(to: list.version - 1)
      print("Restored the content of version \(list.version - 2) as version \(list.version).")
      showList()
    case .history:
      try showHistory(limit: nil)
    case .list:
      showList()
    }
  }

  /// Ticks item `number` (from 1), checked against the latest list inside the update: an item that does
  /// not exist throws, and an item already done is reported; neither writes a version.
  private func markDone(_ number: Int) throws {
    /// Thrown by the transform to leave the list as it is: a transform that throws writes nothing.
    struct AlreadyDone: Error {}
    do {
      try list.update { list in
        guard number <= list.items.count else {
          throw TodoError.noSuchItem(number: number, count: list.items.count)
        }
        guard !list.items[number - 1].done else { throw AlreadyDone() }
        list.items[number - 1].done = true
      }
    } catch is AlreadyDone {
      print("Item \(number) is already done; nothing was written.")
      return
    }
    showList()
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

/// A command line pld-todo does not understand; printed with the usage, and nothing is opened or written.
struct UsageError: Error, CustomStringConvertible {
  /// The usage line, printed after every usage error.
  static let usage = "usage: pld-todo [add TEXT | done N | undo | history | list] [--db PATH]"

  let description: String
  init(_ reason: String) { self.description = reason + "\n" + Self.usage }
}

/// A command that cannot do what it was asked on the current list; nothing is written.
enum TodoError: Error, CustomStringConvertible {
  /// `done N` for an item the list does not have.
  case noSuchItem(number: Int, count: Int)
  /// `undo` with no earlier version of the list.
  case nothingToUndo

  var description: String {
    switch self {
    case .noSuchItem(let number, let count):
      let items = count == 0 ? "the list is empty" : "the list has \(count) item\(count == 1 ? "" : "s")"
      return "there is no item \(number): \(items) (pld-todo list shows them); nothing was written"
    case .nothingToUndo:
      return "nothing to undo: the list has no earlier version; nothing was written"
    }
  }
}

/// What the command line asks for, parsed before the store is opened, so that a command line that makes
/// no sense opens, creates and writes nothing.
enum TodoCommand: Equatable {
  /// No command: count the run, add an item, tick an old one, show list and history.
  case demo
  /// `add TEXT…`: a new item.
  case add(String)
  /// `done N`: tick item N (from 1).
  case done(Int)
  /// `undo`: a rollback to the previous version.
  case undo
  /// `history`: every version of the list.
  case history
  /// `list`: the current list.
  case list

  /// Parses the arguments left once `--db PATH` is taken out.
  ///
  /// - Throws: ``UsageError`` for an unknown command or option, a missing or malformed item number, an
  ///   empty title, or an argument a command does not take. The title of `add` is free text.
  init(_ arguments: [String]) throws {
    guard let name = arguments.first else {
      self = .demo
      return
    }
    let rest = Array(arguments.dropFirst())
    func noArguments(_ command: TodoCommand) throws -> TodoCommand {
      guard rest.isEmpty else {
        throw UsageError("\(name) takes no arguments, but was given \(rest.joined(separator: " "))")
      }
      return command
    }
    switch name {
    case "add":
      let title = rest.joined(separator: " ")
      guard !title.allSatisfy(\.isWhitespace) else {
        throw UsageError("add needs a title: pld-todo add Buy milk")
      }
      self = .add(title)
    case "done":
      guard let text = rest.first else { throw UsageError("done needs an item number: pld-todo done 2") }
      guard rest.count == 1 else {
        throw UsageError("done takes one item number, but was given \(rest.joined(separator: " "))")
      }
      guard let number = Int(text), number >= 1 else {
        throw UsageError("\(text) is not an item number: item numbers are 1, 2, 3 … as pld-todo list shows")
      }
      self = .done(number)
    case "undo": self = try noArguments(.undo)
    case "history": self = try noArguments(.history)
    case "list": self = try noArguments(.list)
    default:
      let kind = name.hasPrefix("-") ? "option" : "command"
      throw UsageError("unknown \(kind) \(name); try add, done, undo, history or list")
    }
  }
}
