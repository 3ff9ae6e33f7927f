/// A benchmark that did not do what it measures (a lost delivery, a wrong version): the run stops,
/// in quick mode too, because the numbers would be meaningless.
struct BenchmarkError: Error, CustomStringConvertible {
  let description: String

  static func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw BenchmarkError(description: message()) }
  }
}
