package import Foundation

/// A live dictionary of the members of a collection: what every backend's collection does the same way.
///
/// A collection named `todo` holds the keys `todo/ID`, each an ordinary key with its own versions;
/// ``/PersistentLiveDataCore/LiveData/value`` maps each member's id to its latest value.
/// `PersistentCollection` (an SQLite file) and the PostgreSQL backend's `SharedCollection` are its
/// subclasses; each adds its backend's writes and reads. The base holds the members' versions, applies
/// changes to them — each commit that changes members is one new ``/PersistentLiveDataCore/LiveData/version``
/// of the collection — and decodes what was written elsewhere under the store's ``DecodeFailurePolicy``.
/// Stores create the instances; an app never subclasses it.
///
/// ```swift
/// func show<Item>(_ items: StoredCollection<Item>, on screen: Screen) {
///   items.observe(owner: screen) { members in screen.rows = members.count }
/// }
/// ```
open class StoredCollection<Element: Codable & Sendable>: LiveData<[String: Element]>, @unchecked Sendable {
  // Unchecked because LiveData is (an open class cannot be checked): the members' versions are behind
  // a lock of their own, every other property this class adds is an immutable `let` of a Sendable type,
  // and the dictionary itself is LiveData's lock-guarded storage.

  /// The collection's name: its members are stored under the keys `name + "/" + id`.
  ///
  /// ```swift
  /// let todos = try store.collection("todo", of: Todo.self)
  /// todos.name   // "todo"
  /// ```
  public let name: String
  /// `name + "/"`: the start of every member's key.
  package let prefix: String
  /// How members' rows become elements under the store's decode-failure policy.
  package let decoding: StoredValueDecoding<Element>
  /// The members by their ids' bytes, and the version of each — of its newest row, or the version its
  /// removal took — so that a change is applied once and never moves a member backwards.
  ///
  /// ``/PersistentLiveDataCore/LiveData/value`` is a `[String: Element]`, whose keys compare as Swift strings
  /// (canonical equivalence): ids spelled differently but equivalent (`café` as U+00E9 or as `e` + U+0301)
  /// are two members here, in ``ids``, the subscript and `PersistentCollection/changes(since:)`, and one
  /// entry of the dictionary (the one written last).
  private let members: Locked<MemberTable>

  private struct MemberTable {
    var versions: [StoreKey: Int64] = [:]
    var elements: [StoreKey: Element] = [:]
  }
  /// The instance itself while it has observers (as a stored live value: see `StoredLiveData`).
  @MainActor private var heldWhileObserved: StoredCollection?

  /// - Parameters:
  ///   - members: Each member's id, version and element, as the store read them.
  ///   - absent: Members the store holds without a value here (left out under the decode-failure
  ///     policy), with their versions: an older change of theirs is not applied.
  package init(
    name: String, decoding: StoredValueDecoding<Element>,
    members: [(id: String, version: Int64, element: Element)], absent: [String: Int64] = [:]
  ) {
    self.name = name
    prefix = name + "/"
    self.decoding = decoding
    var value: [String: Element] = [:]
    var table = MemberTable()
    value.reserveCapacity(members.count)
    table.elements.reserveCapacity(members.count)
    table.versions.reserveCapacity(members.count + absent.count)
    for (id, version) in absent { table.versions[StoreKey(id)] = version }
    for member in members {
      value[member.id] = member.element
      table.elements[StoreKey(member.id)] = member.element
      table.versions[StoreKey(member.id)] = member.version
    }
    self.members = Locked(table)
    super.init(value: value, version: 0)
  }

  /// The ids of the members, in the byte order of their UTF-8 (the order of their keys in the store).
  ///
  /// ```swift
  /// for id in todos.ids { print(id, todos[id]?.title ?? "") }
  /// ```
  public var ids: [String] {
    registerObservationAccess()
    return members.withLock { $0.elements.keys.map(\.text) }
      .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
  }

  /// The member `id`'s latest value, or nil when the collection has no such member.
  ///
  /// ```swift
  /// if let milk = todos["milk"] { print(milk.done) }
  /// ```
  public subscript(id: String) -> Element? {
    registerObservationAccess()
    return members.withLock { $0.elements[StoreKey(id)] }
  }

  /// The version of member `id` in memory: of its latest value, or the one its removal took; 0 when the
  /// collection never saw it.
  package func memberVersion(of id: String) -> Int64 {
    members.withLock { $0.versions[StoreKey(id)] ?? 0 }
  }

  /// The version of the member of `key` in memory (0 when never seen); nil when `key` is not a member's.
  package func memberVersion(ofKey key: String) -> Int64? {
    id(of: key).map { memberVersion(of: $0) }
  }

  /// Records that member `id` is at `version` without changing its value (one that does not decode,
  /// under a lenient policy): an update then writes above it.
  package func noteVersion(_ version: Int64, of id: String) {
    members.withLock { table in table.versions[StoreKey(id)] = max(table.versions[StoreKey(id)] ?? 0, version)
    }
  }

  /// The id of `key` when it is a member's key (longer than ``prefix`` and starting with it).
  package func id(of key: String) -> String? {
    MemberKey.id(of: key, prefix: prefix)
  }

  /// Applies changes committed to members — by this process or elsewhere — as one new version of the
  /// collection: each member moves to its change if it is newer than memory. A written value is taken
  /// as it was staged when it has the element type, decoded otherwise (outside every lock of a store:
  /// the caller holds none); one that does not decode leaves its member as it was, reported.
  ///
  /// - Returns: What to notify once no lock is held; ``CommitEffect/none`` when nothing was newer.
  package func apply(_ changes: [MemberChange], onMainActor: Bool) -> CommitEffect {
    let effect =
      if changes.count == 1, let change = changes.first {
        applyOne(change, onMainActor: onMainActor)
      } else {
        applyMany(changes, onMainActor: onMainActor)
      }
    // A writer on the main actor whose commit reached the collection another way first (a catch-up that
    // read it before the write returned): its observers still hear of it before the write returns, as
    // for a live value, and nobody hears of it twice.
    guard effect.isEmpty, onMainActor, changes.contains(where: { id(of: $0.key) != nil }) else {
      return effect
    }
    return pendingDelivery(onMainActor: true)
  }

  /// ``apply(_:onMainActor:)`` of several changes (a transaction's, or what another process committed).
  private func applyMany(_ changes: [MemberChange], onMainActor: Bool) -> CommitEffect {
    var decoded: [(id: String, version: Int64, element: Element?)] = []
    decoded.reserveCapacity(changes.count)
    for change in changes {
      guard let id = id(of: change.key), change.version > memberVersion(of: id) else { continue }
      switch change {
      case .written(let row, let staged):
        if let element = staged as? Element {
          decoded.append((id, row.version, element))
        } else if let element = decoding.memberValue(row) {
          decoded.append((id, row.version, element))
        }
      case .removed(_, let version, _):
        decoded.append((id, version, nil))
      }
    }
    guard !decoded.isEmpty else { return .none }
    // The table and the dictionary move together: a change that lost a race to a newer one of the same
    // member is dropped here.
    return members.withLock { table in
      advanceInPlace(onMainActor: onMainActor) { value in
        var changed = false
        for (id, version, element) in decoded {
          changed = Self.place(element, id: id, version: version, table: &table, value: &value) || changed
        }
        return changed
      }
    }
  }

  /// ``apply(_:onMainActor:)`` of one change, what every single write hands over: no array is built, and
  /// a value this process wrote (staged) is compared with memory once, under the lock. In this generic
  /// code every array or tuple of `Element` is a metadata lookup: a profile of one member's write had
  /// them at a third of the collection's share of the write.
  private func applyOne(_ change: MemberChange, onMainActor: Bool) -> CommitEffect {
    guard let id = id(of: change.key) else { return .none }
    let element: Element?
    switch change {
    case .written(let row, let staged):
      if let typed = staged as? Element {
        element = typed
      } else {
        // Decoded outside every lock, and only when newer than memory.
        guard row.version > memberVersion(of: id), let decoded = decoding.memberValue(row) else {
          return .none
        }
        element = decoded
      }
    case .removed:
      element = nil
    }
    let version = change.version
    return members.withLock { table in
      advanceInPlace(onMainActor: onMainActor) { value in
        Self.place(element, id: id, version: version, table: &table, value: &value)
      }
    }
  }

  /// Moves member `id` to `element` (nil: removed) at `version` in the table and the dictionary, unless
  /// memory is as new already; returns whether anything changed.
  private static func place(
    _ element: Element?, id: String, version: Int64, table: inout MemberTable, value: inout [String: Element]
  ) -> Bool {
    let key = StoreKey(id)
    guard version > table.versions[key] ?? 0 else { return false }
    table.versions[key] = version
    if let element {
      table.elements[key] = element
      value[id] = element
      return true
    }
    guard table.elements.removeValue(forKey: key) != nil else { return false }
    value.removeValue(forKey: id)
    // Another spelling of an equivalent id shared the entry: it shows again.
    if value.count < table.elements.count { rebuild(&value, from: table.elements) }
    return true
  }

  /// The dictionary of `elements`: for equivalent spellings of an id, the one that sorts last by bytes.
  private static func rebuild(_ value: inout [String: Element], from elements: [StoreKey: Element]) {
    value.removeAll(keepingCapacity: true)
    for key in elements.keys.sorted(by: { $0.text.utf8.lexicographicallyPrecedes($1.text.utf8) }) {
      value[key.text] = elements[key]
    }
  }

  /// The change `changes(since:)` delivers for `change` of the member `id`: its value decoded, or nil for
  /// a removal (whose attribution comes beside it: a removal has no row).
  package func collectionChange(
    of change: MemberChange, id: String, removalAttribution: WriteAttribution?,
    checkpoint: CollectionCheckpoint
  ) throws -> CollectionChange<Element> {
    switch change {
    case .written(let row, _):
      return CollectionChange(
        id: id, version: row.version, value: try decoding.decode(row), writtenAt: row.writtenAt,
        attribution: row.attribution, checkpoint: checkpoint)
    case .removed(_, let version, let at):
      return CollectionChange(
        id: id, version: version, value: nil, writtenAt: at, attribution: removalAttribution,
        checkpoint: checkpoint)
    }
  }

  /// The member ids whose newest state in memory is a value, with their versions: what a backend that
  /// cannot tell which members changed compares with the store.
  package var memberStates: [StoreKey: Int64] {
    members.withLock { table in
      var states: [StoreKey: Int64] = [:]
      for key in table.elements.keys { states[key] = table.versions[key] ?? 0 }
      return states
    }
  }

  // MARK: Kept alive by its observers

  /// Observed, the collection holds itself until its last observer goes, as a stored live value does.
  @MainActor package func observedStateDidChange(_ observed: Bool) {
    heldWhileObserved = observed ? self : nil
  }

  /// Observers bound to a plain object: ``OwnerSweep`` looks for gone owners while nothing is delivered.
  @MainActor package func objectBindingDidChange(_ bound: Bool) {
    if bound {
      OwnerSweep.shared.watch(self)
    } else {
      OwnerSweep.shared.unwatch(self)
    }
  }
}

extension StoredCollection: SelfHoldingLiveData {}

extension StoredCollection: OwnerSweep.Swept {
  @MainActor func removeObserversOfGoneOwners() {
    _ = hasObservers  // reading it removes the observers whose owner is gone
  }
}

extension StoredCollection: StoredCollectionValue {}

/// A change of one member's key, as a store hands it to the live collections that hold the key.
package enum MemberChange: Sendable {
  /// A version written: its row, and the typed value when the writer had one (nothing to decode then).
  case written(StoredRow, staged: (any Sendable)?)
  /// A removal (`PersistentStore/removeKey(_:)`), at the version it took.
  case removed(key: String, version: Int64, at: Date)

  /// The member's key.
  package var key: String {
    switch self {
    case .written(let row, _): row.key
    case .removed(let key, _, _): key
    }
  }

  /// The version written, or the one the removal took.
  package var version: Int64 {
    switch self {
    case .written(let row, _): row.version
    case .removed(_, let version, _): version
    }
  }
}

/// A live collection of a store, as the store sees it: something it hands its members' changes to.
package protocol StoredCollectionValue: AnyObject, Sendable {
  /// `name + "/"`.
  var prefix: String { get }
  /// Applies changes of its members (other keys are ignored); returns whom to notify.
  func apply(_ changes: [MemberChange], onMainActor: Bool) -> CommitEffect
  /// The ids of the members whose newest state in memory is a value, with their versions.
  var memberStates: [StoreKey: Int64] { get }
  /// The version of the member of `key` in memory (0 when never seen); nil when `key` is not a member's.
  func memberVersion(ofKey key: String) -> Int64?
}

/// How a collection's member keys are made and taken apart: `name + "/" + id`, compared by bytes.
package enum MemberKey {
  /// The id of `key` when it is longer than `prefix` and starts with it, by UTF-8 bytes.
  package static func id(of key: String, prefix: String) -> String? {
    let keyBytes = key.utf8
    let prefixBytes = prefix.utf8
    guard keyBytes.count > prefixBytes.count, keyBytes.starts(with: prefixBytes) else { return nil }
    // The prefix's bytes end on a scalar boundary of `key`: the slice is valid UTF-8, copied as it is.
    return String(key[keyBytes.index(keyBytes.startIndex, offsetBy: prefixBytes.count)...])
  }

  /// The smallest string above every string that starts with `prefix`, in UTF-8 byte order; nil when
  /// there is none (a prefix made only of U+10FFFF). Its last scalar that can grow is raised by one and
  /// what follows is dropped: UTF-8 keeps the order of scalars and no scalar's bytes start another's.
  package static func upperBound(of prefix: String) -> String? {
    var scalars = Array(prefix.unicodeScalars)
    while let last = scalars.popLast() {
      var next = last.value + 1
      if next == 0xD800 { next = 0xE000 }  // past the surrogates, which are not scalars
      if let scalar = Unicode.Scalar(next) {
        scalars.append(scalar)
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars)
        return String(result)
      }
    }
    return nil
  }
}
