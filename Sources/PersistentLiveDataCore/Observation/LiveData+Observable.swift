public import Observation

/// `LiveData` takes part in Swift's Observation framework.
///
/// Reading ``LiveData/value`` or ``LiveData/version`` inside `withObservationTracking` — and so in a
/// SwiftUI view's body — registers interest; the next **delivered** version calls `onChange` once, on the
/// main actor. A version is delivered by the main-actor dispatch that hands it to observers: synchronously
/// inside a `set` made on the main actor, in the one scheduled dispatch after writes made elsewhere (the
/// coalesced `postValue` delivery). A dispatch that finds no version newer than the last one announced
/// (a repeated ``LiveData/dispatch()``, a reload that found nothing new) announces nothing. Observers of the
/// LiveData itself are unaffected.
///
/// ```swift
/// let count = MutableLiveData(0)
/// withObservationTracking {
///   _ = count.value
/// } onChange: {
///   print("count changed")   // on the main actor, when version 1 is delivered
/// }
/// count.set(1)
/// ```
///
/// See the article "SwiftUI and Observation" of PersistentLiveData.
extension LiveData: Observable {}

/// The subject and key path a LiveData reports to its registrar.
///
/// Observation only compares key paths within one registrar, so every LiveData uses this one constant key
/// path, for ``LiveData/value`` and ``LiveData/version`` alike (they change together). A key path into the
/// generic `LiveData<Value>` would be instantiated at run time on every read — microseconds — while this
/// one, into a non-generic type, is a constant.
struct LiveDataObservationSubject: Observable {
  var deliveredVersion: Int64 { 0 }
}

extension LiveData {
  /// Tells a surrounding `withObservationTracking` (if any) that this LiveData was read.
  @inline(__always)
  package func registerObservationAccess() {
    observationRegistrar.access(LiveDataObservationSubject(), keyPath: \.deliveredVersion)
  }

  /// Announces `version` to Observation if it is newer than the last version announced: called by the
  /// main-actor dispatch with the version it delivers, so that `onChange` runs on the main actor, once per
  /// delivered version, and never for a dispatch that delivers nothing new.
  @MainActor @inline(__always)
  func announceToObservation(_ version: Int64) {
    guard version > observationVersion else { return }
    observationVersion = version
    observationRegistrar.withMutation(of: LiveDataObservationSubject(), keyPath: \.deliveredVersion) {}
  }
}
