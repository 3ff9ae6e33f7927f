import ArgumentParser

/// The whole-number values of options and arguments (`--version`, `--limit`, `--keep`,
/// `--schema-version`, `--since`, the versions of `diff` and `rollback`), with messages that say what
/// they take.
///
/// ArgumentParser alone answers `--limit -3` with "Missing value" (it takes `-3` for an option) and
/// `--limit x` with "The value 'x' is invalid". Options are therefore declared with
/// `parsing: .unconditional` (their next word is their value, whatever it starts with) and
/// `transform: NumberArgument.parse(atLeast:)`, and each command checks the bound in `validate()`
/// ("--limit must be at least 1."). A negative number where a positional argument is expected
/// (`rollback DB KEY -1`) is handled by ``PLDTool/separatingNegativeNumbers(_:)``.
///
/// ```swift
/// @Option(parsing: .unconditional, transform: NumberArgument.parse(atLeast: 1)) var limit: Int?
/// ```
enum NumberArgument {
  /// Why a value is not a number the option takes: the text after ArgumentParser's
  /// "The value 'x' is invalid for '--limit <n>': ".
  struct Invalid: Error, CustomStringConvertible {
    var description: String
  }

  /// A transform that reads a whole number (decimal digits, an optional sign) and says, when the text is
  /// not one, that a whole number of at least `minimum` is expected. The bound itself is checked by
  /// the command's `validate()`.
  static func parse<Number: FixedWidthInteger & Sendable>(
    atLeast minimum: Number
  ) -> @Sendable (String) throws -> Number {
    { text in
      if let number = Number(text, radix: 10) { return number }
      let digits = text.first == "-" || text.first == "+" ? text.dropFirst() : text[...]
      if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) {
        throw Invalid(
          description: "out of range; a whole number from \(minimum) to \(Number.max) is expected")
      }
      throw Invalid(description: "a whole number of at least \(minimum) is expected")
    }
  }
}
