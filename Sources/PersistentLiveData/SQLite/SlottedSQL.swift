internal import Synchronization

/// An SQL text that every connection caches in a slot of its own: see
/// ``SQLiteConnection/cachedStatement(_:)-(SlottedSQL)``. Declare each one once, as a `static let`: every
/// value takes a new slot.
///
/// ```swift
/// enum Statements {
///   static let latest = SlottedSQL("SELECT max(version) FROM pld_values WHERE key = ?")
/// }
/// ```
struct SlottedSQL: Sendable {
  /// The statement's text.
  package let sql: String
  /// Its position in each connection's slots.
  let slot: Int

  private static let slotsTaken = Atomic<Int>(0)

  /// Gives `sql` the next free slot.
  package init(_ sql: String) {
    self.sql = sql
    slot = Self.slotsTaken.add(1, ordering: .relaxed).oldValue
  }
}
