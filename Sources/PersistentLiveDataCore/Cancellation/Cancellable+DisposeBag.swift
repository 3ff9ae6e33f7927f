extension Cancellable {
  /// Puts this cancellable into `bag`, which cancels it when the bag is disposed or released.
  ///
  /// ```swift
  /// liveData.observeForever { render($0) }
  ///   .disposed(by: bag)
  /// ```
  /// - Parameter bag: The bag that will cancel it.
  public func disposed(by bag: DisposeBag) {
    bag.insert(self)
  }
}
