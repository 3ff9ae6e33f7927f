// Temporary until the lifecycle branch lands.
@MainActor public protocol LifecycleOwner: AnyObject { var scopeLifecycle: ScopeLifecycle { get } }
@MainActor public protocol LifecycleDependent: AnyObject { var scopeLifecycle: ScopeLifecycle? { get } }
