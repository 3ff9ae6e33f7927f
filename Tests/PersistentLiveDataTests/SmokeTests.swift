import Testing

@testable import PersistentLiveData

@Suite struct SmokeTests {
  @Test func lifecycleStartsInitialized() async {
    let state = await MainActor.run { ScopeLifecycle().state }
    #expect(state == .initialized)
  }
}
