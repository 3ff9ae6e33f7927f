import Testing

@testable import PersistentLiveData

@MainActor @Suite struct ViewLifecycleTests {
  @Test func stateIsInitializedUntilDisplayedActiveWhileDisplayedInactiveAfterwards() {
    let lifecycle = ViewLifecycle()
    #expect(lifecycle.state == .initialized)
    lifecycle.viewDidLoad()
    #expect(lifecycle.state == .initialized)
    lifecycle.isDisplayed = true
    #expect(lifecycle.state == .active)
    lifecycle.isDisplayed = false
    #expect(lifecycle.state == .inactive)
    lifecycle.isDisplayed = true
    #expect(lifecycle.state == .active)
  }

  @Test func viewDidLoadIsIdempotent() {
    let lifecycle = ViewLifecycle()
    let subscriber = RecordingViewSubscriber()
    lifecycle.subscribe(subscriber)
    lifecycle.viewDidLoad()
    lifecycle.viewDidLoad()
    #expect(lifecycle.isLoaded)
    #expect(subscriber.take() == [.viewDidLoad])
  }

  @Test func isDisplayedIsDeduplicated() {
    let lifecycle = ViewLifecycle()
    let subscriber = RecordingViewSubscriber()
    lifecycle.subscribe(subscriber)
    lifecycle.viewDidLoad()
    _ = subscriber.take()

    lifecycle.isDisplayed = true
    lifecycle.isDisplayed = true
    #expect(subscriber.take() == [.viewDidAppear])
    lifecycle.isDisplayed = false
    lifecycle.isDisplayed = false
    #expect(subscriber.take() == [.viewDidDisappear])
  }

  @Test func hidingAViewThatWasNeverDisplayedCallsNobody() {
    let lifecycle = ViewLifecycle()
    let subscriber = RecordingViewSubscriber()
    lifecycle.subscribe(subscriber)
    lifecycle.isDisplayed = false
    #expect(subscriber.take() == [])
    #expect(lifecycle.state == .initialized)
    #expect(!lifecycle.isLoaded)
  }

  @Test func displayingBeforeViewDidLoadLoadsFirst() {
    let lifecycle = ViewLifecycle()
    let subscriber = RecordingViewSubscriber()
    lifecycle.subscribe(subscriber)

    lifecycle.isDisplayed = true

    #expect(lifecycle.isLoaded)
    #expect(subscriber.take() == [.viewDidLoad, .viewDidAppear])
    lifecycle.viewDidLoad()
    #expect(subscriber.take() == [])
  }

  @Test func subscribingReplaysViewDidLoad() {
    let lifecycle = ViewLifecycle()
    lifecycle.viewDidLoad()
    let subscriber = RecordingViewSubscriber()
    lifecycle.subscribe(subscriber)
    #expect(subscriber.take() == [.viewDidLoad])
  }

  @Test func subscribingToADisplayedViewReplaysViewDidLoadAndViewDidAppear() {
    let lifecycle = ViewLifecycle()
    lifecycle.isDisplayed = true
    let subscriber = RecordingViewSubscriber()
    lifecycle.subscribe(subscriber)
    #expect(subscriber.take() == [.viewDidLoad, .viewDidAppear])
  }

  @Test func subscribingToAHiddenViewReplaysOnlyViewDidLoad() {
    let lifecycle = ViewLifecycle()
    lifecycle.isDisplayed = true
    lifecycle.isDisplayed = false
    let subscriber = RecordingViewSubscriber()
    lifecycle.subscribe(subscriber)
    #expect(subscriber.take() == [.viewDidLoad])
  }

  @Test func subscribingTheSameObjectTwiceCallsItOnce() {
    let lifecycle = ViewLifecycle()
    let subscriber = RecordingViewSubscriber()
    lifecycle.subscribe(subscriber)
    lifecycle.subscribe(subscriber)
    lifecycle.isDisplayed = true
    #expect(subscriber.take() == [.viewDidLoad, .viewDidAppear])
  }

  @Test func viewSubscribersAreHeldWeakly() {
    let lifecycle = ViewLifecycle()
    weak var weakSubscriber: RecordingViewSubscriber?
    do {
      let subscriber = RecordingViewSubscriber()
      weakSubscriber = subscriber
      lifecycle.subscribe(subscriber)
      lifecycle.isDisplayed = true
    }
    #expect(weakSubscriber == nil)
    lifecycle.isDisplayed = false
    #expect(lifecycle.state == .inactive)
  }

  @Test func hidingFromInsideViewDidAppearSkipsTheRemainingAppearances() {
    let lifecycle = ViewLifecycle()
    let first = RecordingViewSubscriber()
    let second = RecordingViewSubscriber()
    first.onEvent = { event in
      if event == .viewDidAppear { lifecycle.isDisplayed = false }
    }
    lifecycle.subscribe(first)
    lifecycle.subscribe(second)

    lifecycle.isDisplayed = true

    #expect(lifecycle.state == .inactive)
    #expect(first.take() == [.viewDidLoad, .viewDidAppear, .viewDidDisappear])
    #expect(second.take() == [.viewDidLoad])
  }

  @Test func viewSubscriberWithDefaultImplementationsCanBeSubscribed() {
    let lifecycle = ViewLifecycle()
    let subscriber = SilentViewSubscriber()
    lifecycle.subscribe(subscriber)
    lifecycle.isDisplayed = true
    lifecycle.isDisplayed = false
    #expect(lifecycle.state == .inactive)
  }

  @Test func viewLifecycleOwnerExposesItsLifecycle() {
    final class Screen: ViewLifecycleOwner {
      let viewLifecycle = ViewLifecycle()
    }
    let screen = Screen()
    screen.viewLifecycle.isDisplayed = true
    #expect(screen.viewLifecycle.state == .active)
  }
}
