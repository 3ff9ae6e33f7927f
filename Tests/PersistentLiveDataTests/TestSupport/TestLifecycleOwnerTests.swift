import PersistentLiveData
import PersistentLiveDataTesting
import Testing

@Suite struct TestLifecycleOwnerTests {
  @MainActor
  @Test func drivesObserversThroughActivateDeactivateDestroy() throws {
    let store = try PersistentStore.inMemory()
    let title = try store.liveData("title", default: "")
    let owner = TestLifecycleOwner()
    let shown = DeliveryRecorder<String>()
    title.observe(owner: owner, shown.callback)
    shown.expectNothing("an initialized owner is not active")

    owner.activate()
    owner.deactivate()
    try title.set("a")
    try title.set("b")
    shown.expect([""])
    owner.activate()
    shown.expect(["b"], "only the latest undelivered version on reactivation")

    owner.destroy()
    #expect(!title.hasObservers, "destroying the owner removes its observers")
    try title.set("c")
    shown.expectNothing()
    #expect(owner.states == [.initialized, .active, .inactive, .active, .inactive, .deinitialized])
    #expect(owner.state == .initialized, "a fresh scope after destroy")
  }
}
