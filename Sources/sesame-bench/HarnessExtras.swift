import Foundation

extension Harness {
    struct Flags {
        let upload: Bool
        let pinned: Bool
        let mutualTLS: Bool
        let proxy: Bool
        /// Sesame's request loop runs on the session's event loop (the documented fast path).
        let onLoop: Bool
        /// HTTP/2 (every client multiplexes streams on one connection).
        let http2: Bool
    }

    /// Where a workload's extras come from in this run.
    struct Extras {
        let sparseFile: String
        let pin: String
        let clientCertificate: String
        let clientKey: String
        let proxy: String
        /// The processor the clients run on (`CPUPlacement`); nil: any.
        let clientCPU: Int?

        /// Where the driver's `spawn` runs a client.
        var placement: [String: String] { clientCPU.map { ["SESAME_BENCH_CPU": String($0)] } ?? [:] }

        /// The environment switches of the Sesame worker and the libcurl driver.
        func environment(_ flags: Flags) -> [String: String] {
            var environment = placement
            if flags.upload { environment["SESAME_BENCH_UPLOAD"] = sparseFile }
            if flags.pinned { environment["SESAME_BENCH_PIN"] = pin }
            if flags.mutualTLS {
                environment["SESAME_BENCH_CERT"] = clientCertificate
                environment["SESAME_BENCH_KEY"] = clientKey
            }
            if flags.proxy { environment["SESAME_BENCH_PROXY"] = proxy }
            if flags.onLoop { environment["SESAME_BENCH_ON_LOOP"] = "1" }
            if flags.http2 { environment["SESAME_BENCH_HTTP2"] = "1" }
            return environment
        }

        /// The same for the curl CLI.
        func curlArguments(_ flags: Flags) -> [String] {
            var arguments: [String] = []
            if flags.upload { arguments += ["-F", "file=@\(sparseFile)"] }
            if flags.pinned { arguments += ["--pinnedpubkey", pin] }
            if flags.mutualTLS { arguments += ["--cert", clientCertificate, "--key", clientKey] }
            if flags.proxy { arguments += ["-x", proxy, "--proxy-anyauth"] }
            if flags.http2 { arguments += ["--http2"] }
            return arguments
        }
    }
}
