// libFuzzer's entry point for every Sesame fuzz target. scripts/fuzz.sh compiles the `Sesame`
// module's sources with these files (`swiftc -sanitize=fuzzer,address`, one module, so internal
// parsers are reachable) and runs each target in turn, chosen by SESAME_FUZZ_TARGET.

import Foundation

/// The targets, by the name scripts/fuzz.sh gives them.
let fuzzTargets: [String: @Sendable (UnsafeRawBufferPointer) -> Void] = [
    "auth-challenge": fuzzAuthChallenge,
    "http1-response": fuzzHTTP1Response,
    "set-cookie": fuzzSetCookie,
    "cookie-jar": fuzzCookieJar,
    "netrc": fuzzNetrc,
    "credential-store": fuzzCredentialStore,
    "certificates": fuzzCertificates,
    "user-files": fuzzUserFiles,
    "location": fuzzLocation,
    "http2-frames": fuzzHTTP2Frames,
]

let selectedFuzzTarget: @Sendable (UnsafeRawBufferPointer) -> Void = {
    let name = ProcessInfo.processInfo.environment["SESAME_FUZZ_TARGET"] ?? ""
    guard let target = fuzzTargets[name] else {
        let names = fuzzTargets.keys.sorted().joined(separator: ", ")
        FileHandle.standardError.write(Data("SESAME_FUZZ_TARGET must be one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func sesameFuzzTestOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    selectedFuzzTarget(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

/// Stops the run with `message` when `condition` fails (an optimised build's `precondition` would
/// trap without saying why).
func fuzzRequire(_ condition: Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) {
    guard !condition else { return }
    fuzzFail(message(), line: line)
}

func fuzzFail(_ message: String, line: UInt = #line) -> Never {
    FileHandle.standardError.write(Data("fuzz: invariant broken (line \(line)): \(message)\n".utf8))
    abort()
}
