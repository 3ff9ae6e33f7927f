// libFuzzer target: arbitrary database images opened and restored by the library. Build and run (see
// Fuzz/README.md):
//   swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
//     --scratch-path .build-fuzz --product pld-fuzz-restore
//   .build-fuzz/release/pld-fuzz-restore -max_total_time=60 -max_len=65536 Fuzz/corpus/restore
// (The -Xswiftc flag is needed: Fuzz/README.md.) Built without the fuzzer, this program does nothing.
import Foundation
import PLDFuzzHarness

/// libFuzzer calls this with each input; 0 means "keep going".
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRestore(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  FuzzHarness.restore(Data(bytes: data, count: size))
  return 0
}
