// libFuzzer target: pld-tool's input (a key and a JSON text) through `setJSON(_:forKey:)`, read back,
// stored again and rolled back, on an in-memory store. Build and run (see Fuzz/README.md):
//   swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
//     --scratch-path .build-fuzz --product pld-fuzz-tool
//   .build-fuzz/release/pld-fuzz-tool -max_total_time=60 Fuzz/corpus/tool
// (The -Xswiftc flag is needed: Fuzz/README.md.) Built without the fuzzer, this program does nothing.
import Foundation
import PLDFuzzHarness

/// libFuzzer calls this with each input; 0 means "keep going".
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTool(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  FuzzHarness.tool(Data(bytes: data, count: size))
  return 0
}
