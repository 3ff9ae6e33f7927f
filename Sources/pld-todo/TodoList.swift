import Foundation

/// One item of the list.
struct TodoItem: Codable, Sendable, Equatable {
  var title: String
  var done = false
}

/// Items in order: how the list is shown, and how releases before collections stored the whole list
/// as one value (the key `todo.list`, moved into the collection at startup).
struct TodoList: Codable, Sendable, Equatable {
  var items: [TodoItem] = []

  init(_ items: [TodoItem] = []) {
    self.items = items
  }

  var summary: String {
    let open = items.filter { !$0.done }.count
    return "\(items.count) item\(items.count == 1 ? "" : "s"), \(open) open"
  }

  func rendered() -> String {
    guard !items.isEmpty else { return "  (empty)" }
    return items.enumerated().map { index, item in
      "  \(index + 1). [\(item.done ? "x" : " ")] \(item.title)"
    }.joined(separator: "\n")
  }
}
