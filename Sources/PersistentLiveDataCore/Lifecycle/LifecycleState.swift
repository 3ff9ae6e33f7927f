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
  ///
  /// ```swift
  /// ScopeLifecycle().state == .initialized   // true
  /// ```
  case initialized
  /// Activated: bound observers receive values.
  ///
  /// ```swift
  /// scope.activate()
  /// scope.state == .active   // true
  /// ```
  case active
  /// Deactivated after having been active: bound observers wait.
  ///
  /// ```swift
  /// scope.deactivate()
  /// scope.state == .inactive   // true, if it was active
  /// ```
  case inactive
  /// Released: bound observers have been removed.
  ///
  /// Only ``ScopeLifecycle/observeState(_:)`` callbacks can see this state; they receive it from the
  /// scope's `deinit`.
  ///
  /// ```swift
  /// scope.observeState { if $0 == .deinitialized { print("gone") } }
  /// ```
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
  ///
  /// ```swift
  /// LifecycleStateOptions.inactive.rawValue   // 1 << LifecycleState.inactive.rawValue
  /// ```
  public let rawValue: Int

  /// Creates a set from its raw bits.
  ///
  /// ```swift
  /// let active = LifecycleStateOptions(rawValue: 1 << 1)   // == .active
  /// ```
  /// - Parameter rawValue: Bit `n` stands for the ``LifecycleState`` whose raw value is `n`.
  public init(rawValue: Int) { self.rawValue = rawValue }

  /// The set holding exactly `state`.
  ///
  /// ```swift
  /// LifecycleStateOptions(.active) == .active   // true
  /// ```
  /// - Parameter state: The only member of the set.
  public init(_ state: LifecycleState) { self.rawValue = 1 << state.rawValue }

  /// The scope has never been activated.
  ///
  /// ```swift
  /// observer.autoCancel(scope, when: .initialized)   // cancelled at once if never activated
  /// ```
  public static let initialized = LifecycleStateOptions(.initialized)
  /// The scope is active.
  ///
  /// ```swift
  /// LifecycleStateOptions.active.contains(.active)   // true
  /// ```
  public static let active = LifecycleStateOptions(.active)
  /// The scope was active and has been deactivated.
  ///
  /// ```swift
  /// task.autoCancel(scope, when: .inactive)   // cancelled at the next deactivation
  /// ```
  public static let inactive = LifecycleStateOptions(.inactive)
  /// The scope has been released.
  ///
  /// ```swift
  /// observer.autoCancel(scope, when: .deinitialized)   // lives as long as the scope
  /// ```
  public static let deinitialized = LifecycleStateOptions(.deinitialized)
  /// Every state but ``active``: `[.initialized, .inactive, .deinitialized]`. The default of `autoCancel`.
  ///
  /// ```swift
  /// task.autoCancel(scope, when: .notActive)   // the same as task.autoCancel(scope)
  /// ```
  public static let notActive: LifecycleStateOptions = [.initialized, .inactive, .deinitialized]

  /// Whether `state` is a member of the set.
  ///
  /// ```swift
  /// LifecycleStateOptions.notActive.contains(.inactive)   // true
  /// ```
  /// - Parameter state: The state to look for.
  /// - Returns: `true` if the set holds `state`.
  public func contains(_ state: LifecycleState) -> Bool { contains(LifecycleStateOptions(state)) }
}
