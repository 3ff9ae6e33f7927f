import Foundation
import Testing

@testable import PersistentLiveData
@testable import PersistentLiveDataCore

@Suite struct DisposeBagCancellationTests {
  @Test func releasedBagCancelsItsContents() {
    let first = CountingCancellable()
    let second = CountingCancellable()
    weak var weakBag: DisposeBag?
    do {
      let bag = DisposeBag()
      weakBag = bag
      bag.insert(first)
      second.disposed(by: bag)
      #expect(!first.isCancelled)
    }
    #expect(weakBag == nil)
    #expect(first.cancelCount == 1)
    #expect(second.cancelCount == 1)
  }

  @Test func disposeCancelsNowAndTheBagStaysUsable() {
    let bag = DisposeBag()
    let first = CountingCancellable()
    bag.insert(first)

    bag.dispose()
    #expect(first.cancelCount == 1)
    #expect(bag.count == 0)

    let second = CountingCancellable()
    bag.insert(second)
    bag.dispose()
    #expect(second.cancelCount == 1)
    // What was disposed before is not cancelled again.
    #expect(first.cancelCount == 1)
  }

  @Test func disposeReleasesItsContents() {
    let bag = DisposeBag()
    weak var weakCancellable: CountingCancellable?
    do {
      let cancellable = CountingCancellable()
      weakCancellable = cancellable
      bag.insert(cancellable)
    }
    #expect(weakCancellable != nil)
    bag.dispose()
    #expect(weakCancellable == nil)
  }

  @Test func disposingAnEmptyBagTwiceIsHarmless() {
    let bag = DisposeBag()
    bag.dispose()
    bag.dispose()
    #expect(bag.count == 0)
  }

  @Test func cancelCanInsertIntoTheSameBagWithoutDeadlock() {
    final class Reinserting: Cancellable {
      let bag: DisposeBag
      let next: CountingCancellable
      init(bag: DisposeBag, next: CountingCancellable) {
        self.bag = bag
        self.next = next
      }
      func cancel() { bag.insert(next) }
    }
    let bag = DisposeBag()
    let next = CountingCancellable()
    bag.insert(Reinserting(bag: bag, next: next))
    bag.dispose()
    #expect(bag.count == 1)
    bag.dispose()
    #expect(next.cancelCount == 1)
  }

  @Test func taskInABagIsCancelledWhenTheBagIsDisposed() async {
    let bag = DisposeBag()
    let task = Task {
      while !Task.isCancelled { await Task.yield() }
    }
    task.disposed(by: bag)
    bag.dispose()
    await task.value
    #expect(task.isCancelled)
  }

  @Test func insertAndDisposeFromManyThreadsCancelEverythingOnce() async {
    let bag = DisposeBag()
    let perThread = 500
    let threadCount = 4
    let items = (0..<(perThread * threadCount)).map { _ in CountingCancellable() }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let group = DispatchGroup()
      for index in 0..<threadCount {
        group.enter()
        let slice = Array(items[(index * perThread)..<((index + 1) * perThread)])
        Thread {
          for (offset, item) in slice.enumerated() {
            bag.insert(item)
            if offset % 50 == 0 { bag.dispose() }
          }
          group.leave()
        }.start()
      }
      group.notify(queue: .global()) { continuation.resume() }
    }
    bag.dispose()
    #expect(items.allSatisfy { $0.cancelCount == 1 })
  }
}
