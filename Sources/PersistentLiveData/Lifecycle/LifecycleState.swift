/// The stage a ``ScopeLifecycle`` or ``ViewLifecycle`` is in.
///
/// A scope starts ``initialized``, moves between ``active`` and ``inactive`` as it is activated and
/// deactivated, and ends ``deinitialized`` when it is released. LiveData observers bound to a scope
/// receive values only while it is ``active`` and are removed when it reaches ``deinitialized``.
///
/// ```swift
/// let scope = ScopeLifecycle()
/// scope.state            // .initialized
/// scope.activate()
/// scope.state            // .active
/// ```
public enum LifecycleState: Int, Sendable, CaseIterable {
  /// Created and never activated.
  case initialized
  /// Activated: bound observers receive values.
  case active
  /// Deactivated after having been active: bound observers wait.
  case inactive
  /// Released: bound observers have been removed.
  case deinitialized
}

/// A set of ``LifecycleState`` values, used by ``Cancellable/autoCancel(_:when:)-(ScopeLifecycle,_)``.
///
/// ```swift
/// let options: LifecycleStateOptions = [.inactive, .deinitialized]
/// options.contains(LifecycleStateOptions(.inactive))   // true
/// ```
public struct LifecycleStateOptions: OptionSet, Sendable, Hashable {
  /// The bits of the set, one per ``LifecycleState`` raw value.
  public let rawValue: Int

  /// Creates a set from its raw bits.
  ///
  /// ```swift
  /// let active = LifecycleStateOptions(rawValue: 1 << 1)   // == .active
  /// ```
  public init(rawValue: Int) { self.rawValue = rawValue }

  /// The set holding exactly `state`.
  ///
  /// ```swift
  /// LifecycleStateOptions(.active) == .active   // true
  /// ```
  public init(_ state: LifecycleState) { self.rawValue = 1 << state.rawValue }

  /// The scope has never been activated.
  public static let initialized = LifecycleStateOptions(.initialized)
  /// The scope is active.
  public static let active = LifecycleStateOptions(.active)
  /// The scope was active and has been deactivated.
  public static let inactive = LifecycleStateOptions(.inactive)
  /// The scope has been released.
  public static let deinitialized = LifecycleStateOptions(.deinitialized)
  /// Every state but ``active``: `[.initialized, .inactive, .deinitialized]`.
  public static let notActive: LifecycleStateOptions = [.initialized, .inactive, .deinitialized]

  /// Whether `state` is a member of the set.
  ///
  /// ```swift
  /// LifecycleStateOptions.notActive.contains(.inactive)   // true
  /// ```
  public func contains(_ state: LifecycleState) -> Bool { contains(LifecycleStateOptions(state)) }
}
