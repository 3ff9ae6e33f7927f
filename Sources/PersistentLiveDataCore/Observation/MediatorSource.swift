/// One source of a ``MediatorLiveData``, seen without its value type.
@MainActor protocol MediatorSourceLink: AnyObject {
  /// The identity of the source LiveData.
  var sourceID: ObjectIdentifier { get }
  /// Starts observing the source on behalf of `mediator`, which the source then keeps alive.
  func plug(into mediator: any AnyObject & Sendable)
  /// Stops observing the source.
  func unplug()
  /// Whether a lifecycle holds the mediator: the source must then be held too.
  func setHeldByLifecycle(_ held: Bool)
}

/// One source of a mediator: it plugs (observes the source forever) and unplugs, remembering the last
/// version delivered so that replugging only delivers what is new.
///
/// Who holds whom, to keep an observed chain alive without a cycle that outlives its observers:
/// - While plugged, the source holds the observer, which holds the mediator: a mediator with active
///   observers lives as long as its sources (Android: the source holds the mediator's observer).
/// - The mediator holds its links; a link holds its source strongly when it is not plugged (to plug again
///   later), or when a lifecycle holds the mediator (the owner's lifecycle reaches the whole chain, as on
///   Android). Otherwise it holds the source weakly, so that source and mediator do not hold each other: a
///   chain observed forever whose root nobody holds any more can never change again, and is released.
final class MediatorSource<S: Sendable>: MediatorSourceLink {
  let sourceID: ObjectIdentifier
  private weak var source: LiveData<S>?
  /// The source, when the link must keep it alive.
  private var retainedSource: LiveData<S>?
  private let onChanged: @MainActor (S) -> Void
  private var deliveredVersion: Int64
  private var isPlugged = false
  /// The observer registered with the source while plugged. Weak: the source holds it, and it holds the
  /// mediator, which holds this link.
  private weak var pluggedObserver: Observer<S>?
  /// The plugged observer's reference to the mediator, cleared at unplug.
  private weak var pluggedHold: MediatorHold?
  private var isHeldByLifecycle = false

  init(source: LiveData<S>, deliveredVersion: Int64, onChanged: @escaping @MainActor (S) -> Void) {
    sourceID = ObjectIdentifier(source)
    self.source = source
    retainedSource = source
    self.deliveredVersion = deliveredVersion
    self.onChanged = onChanged
  }

  func plug(into mediator: any AnyObject & Sendable) {
    guard !isPlugged, let source else { return }
    let hold = MediatorHold(mediator)
    let onChanged = onChanged
    let observer = Observer<S> { value in
      withExtendedLifetime(hold.mediator) { onChanged(value) }
    }
    isPlugged = true
    pluggedObserver = observer
    pluggedHold = hold
    updateRetention()
    source.observeForever(observer: observer, deliveredVersion: deliveredVersion)
  }

  func unplug() {
    guard isPlugged else { return }
    isPlugged = false
    // The source's registry may keep the removed observer a while (it compacts lazily): let go of the
    // mediator now.
    pluggedHold?.mediator = nil
    pluggedHold = nil
    let observer = pluggedObserver
    pluggedObserver = nil
    // Either may be gone: a source released while plugged has nothing left to unplug from.
    guard let source, let observer else { return }
    updateRetention()
    if let version = source.removeReturningDeliveredVersion(observer) { deliveredVersion = version }
  }

  func setHeldByLifecycle(_ held: Bool) {
    guard held != isHeldByLifecycle else { return }
    isHeldByLifecycle = held
    guard let source else { return }
    (source as? MediatorLiveData<S>)?.changeLifecycleHolds(by: held ? 1 : -1)
    updateRetention()
  }

  private func updateRetention() {
    retainedSource = !isPlugged || isHeldByLifecycle ? source : nil
  }
}

/// The reference from a plugged observer to its mediator, which unplugging clears.
@MainActor private final class MediatorHold {
  var mediator: (any AnyObject & Sendable)?
  init(_ mediator: any AnyObject & Sendable) { self.mediator = mediator }
}
