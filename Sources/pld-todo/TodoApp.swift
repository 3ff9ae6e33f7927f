import Foundation
import PersistentLiveData

/// The command-line to-do list: `pld-todo [add TEXT | done N | undo | history | list] [--db PATH]`.
///
/// Each item is a member of the collection `todo` (the key `todo/ID`, its id a zero-padded number, so
/// that ids sort by bytes in the order items were added): adding or ticking an item writes that item's
/// key only. Without a command it records this run and shows the list, the observers at work and the
/// history, so that running it twice shows the state continuing.
@MainActor
final class TodoApp: LifecycleOwner {
  let scopeLifecycle = ScopeLifecycle()
  let store: PersistentStore
  let todos: PersistentCollection<TodoItem>
  let runs: PersistentLiveData<Int>

  /// The key under which releases before collections kept the whole list as one value.
  static let oldListKey = "todo.list"

  init(databasePath: String) throws {
    var options = StoreOptions()
    options.applicationIdentifier = "pld-todo"  // another app's store at this path is refused, not used
    store = try PersistentStore(path: databasePath, options: options)
    todos = try store.collection("todo", of: TodoItem.self)
    runs = try store.liveData("todo.runs", default: 0)
    try moveOldList()
  }

  /// Moves the list an older release kept in one value (``oldListKey``) into the collection, once: its
  /// items become members, and the old key gets a last, empty version, in one transaction, attributed.
  /// The old key's history stays (`pld-tool history DB todo.list`); a second start finds it empty and
  /// moves nothing, also when several processes start together (the update below conflicts and retries
  /// on the emptied list).
  private func moveOldList() throws {
    /// Thrown by the transform when the old list is empty (moved already): nothing is written.
    struct NothingToMove: Error {}
    guard try store.keys(prefix: Self.oldListKey).contains(Self.oldListKey) else { return }
    let old = try store.liveData(Self.oldListKey, default: TodoList())
    guard !old.value.items.isEmpty else { return }
    let moved = WriteAttribution(
      author: "pld-todo", reason: "moved the items of \(Self.oldListKey) into the todo collection")
    do {
      try WriteAttribution.$current.withValue(moved) {
        try store.transaction {
          var items: [TodoItem] = []
          try old.update { list in
            guard !list.items.isEmpty else { throw NothingToMove() }
            items = list.items
            list.items = []
          }
          let first = (todos.ids.compactMap { Int($0) }.max() ?? 0) + 1
          for (index, item) in items.enumerated() { try todos.set(item, for: Self.id(first + index)) }
        }
      }
    } catch is NothingToMove {
      return  // another process moved it first
    }
  }

  /// The id of the item added `number`th: zero-padded, so that byte order is the order of adding.
  static func id(_ number: Int) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
  }

  /// The id the next added item takes: one above the highest number so far.
  private var nextID: String {
    Self.id((todos.ids.compactMap { Int($0) }.max() ?? 0) + 1)
  }

  /// Binds the screen: while this owner's scope is active, every committed change of the collection is
  /// printed. `receiveCurrent: false`: the observer reports changes, not the state at startup.
  func bindObservers() {
    scopeLifecycle.activate()
    todos.observe(owner: self, receiveCurrent: false) { app, items in
      print("  ↳ observer: the list changed (\(TodoList(app.todos.ids.compactMap { items[$0] }).summary))")
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
      try todos.set(TodoItem(title: title), for: nextID)
      showList()
    case .done(let number):
      try markDone(number)
    case .undo:
      try undo()
      showList()
    case .history:
      try showHistory(limit: nil)
    case .list:
      showList()
    }
  }

  /// Ticks item `number` (from 1, in the order of ``todos``' ids): an item that does not exist throws,
  /// and an item already done is reported; neither writes a version.
  private func markDone(_ number: Int) throws {
    /// Thrown by the transform to leave the item as it is: a transform that throws writes nothing.
    struct AlreadyDone: Error {}
    let ids = todos.ids
    guard number <= ids.count else { throw TodoError.noSuchItem(number: number, count: ids.count) }
    do {
      try todos.update(ids[number - 1], default: TodoItem(title: "")) { item in
        guard !item.done else { throw AlreadyDone() }
        item.done = true
      }
    } catch is AlreadyDone {
      print("Item \(number) is already done; nothing was written.")
      return
    }
    showList()
  }

  /// Undoes the latest change of any item: an item written more than once goes back to the content of
  /// its previous version (as a new version: history is never rewritten); an item written once is
  /// removed.
  private func undo() throws {
    var latest: (id: String, entry: Versioned<TodoItem>)?
    for id in todos.ids {
      guard let entry = try todos.member(id, default: TodoItem(title: "")).history(limit: 1).first else {
        continue
      }
      if latest.map({ entry.writtenAt >= $0.entry.writtenAt }) ?? true { latest = (id, entry) }
    }
    guard let (id, entry) = latest else { throw TodoError.nothingToUndo }
    let number = (todos.ids.firstIndex(of: id) ?? 0) + 1
    let item = try todos.member(id, default: TodoItem(title: ""))
    if entry.version > 1, try item.value(at: entry.version - 1) != nil {
      try item.rollback(to: entry.version - 1)
      print(
        "Restored item \(number) to the content of its version \(entry.version - 1), as version \(item.version)."
      )
    } else {
      try todos.remove(id)
      print("Removed item \(number) (\(entry.value.title)), which the undone change added.")
    }
  }

  /// The default run: count the run, add an item and tick an old one (in one transaction), show list
  /// and history.
  private func demo() throws {
    let run = try runs.update { $0 += 1 }
    print("Run #\(run) — state kept in \(store.path ?? "memory")\n")
    let open = todos.ids.filter { todos[$0]?.done == false }
    try store.transaction {
      if todos.ids.count >= 2, let first = open.first {
        try todos.update(first, default: TodoItem(title: "")) { $0.done = true }
      }
      try todos.set(TodoItem(title: "Item added by run #\(run)"), for: nextID)
    }
    showList()
    print("")
    try showHistory(limit: 3)
    print("\nRun it again and the list continues. Try also: add TEXT, done N, undo, history.")
    print("Inspect the store with: swift run pld-tool keys \(store.path ?? "") --prefix todo/")
  }

  private func showList() {
    print("To-do list (\(todos.ids.count) item\(todos.ids.count == 1 ? "" : "s")):")
    print(TodoList(todos.ids.compactMap { todos[$0] }).rendered())
  }

  /// Every kept version of every item, newest first (`limit`: the newest ones only).
  private func showHistory(limit: Int?) throws {
    var entries: [(number: Int, entry: Versioned<TodoItem>)] = []
    for (index, id) in todos.ids.enumerated() {
      let versions = try todos.member(id, default: TodoItem(title: "")).history(limit: limit)
      entries += versions.map { (index + 1, $0) }
    }
    entries.sort { ($0.entry.writtenAt, $0.number) > ($1.entry.writtenAt, $1.number) }
    print("History\(limit.map { " (last \($0))" } ?? ""):")
    let formatter = ISO8601DateFormatter()
    for (number, entry) in entries.prefix(limit ?? entries.count) {
      let mark = entry.value.done ? "x" : " "
      print(
        "  item \(number) v\(entry.version)  \(formatter.string(from: entry.writtenAt))  [\(mark)] \(entry.value.title)"
      )
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
  /// `undo` with no item to undo a change of.
  case nothingToUndo

  var description: String {
    switch self {
    case .noSuchItem(let number, let count):
      let items = count == 0 ? "the list is empty" : "the list has \(count) item\(count == 1 ? "" : "s")"
      return "there is no item \(number): \(items) (pld-todo list shows them); nothing was written"
    case .nothingToUndo:
      return "nothing to undo: the list is empty; nothing was written"
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
  /// `undo`: the latest change of an item undone.
  case undo
  /// `history`: every version of every item.
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
