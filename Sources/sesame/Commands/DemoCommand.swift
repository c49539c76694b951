import FoundationEssentials
import Sesame
import SesameTesting

/// `sesame demo`: walks through what Sesame does, against `SesameTesting` servers on loopback.
enum DemoCommand {
    struct Step: Sendable {
        let name: String
        let summary: String
        let run: @Sendable (DemoContext) async throws -> Void
    }

    static let steps: [Step] = [
        Step(name: "basic", summary: "HTTP Basic answered by the seeds' Listing 4-1, then sent preemptively") {
            try await DemoPasswordSteps.basic($0)
        },
        Step(name: "digest", summary: "Digest SHA-256 chosen over Basic, rspauth checked, reused with nc+1") {
            try await DemoPasswordSteps.digest($0)
        },
        Step(
            name: "wrong-password",
            summary: "a wrong password is tried at most three times, then the 401 is delivered"
        ) {
            try await DemoPasswordSteps.wrongPassword($0)
        },
        Step(
            name: "bearer",
            summary: "an expired Bearer token refreshed once for 16 refused requests; a failed refresh fails each once"
        ) {
            try await DemoBearerSteps.bearer($0)
        },
        Step(name: "server-trust", summary: "a server-trust decision made asynchronously while the handshake waits") {
            try await DemoTrustSteps.serverTrust($0)
        },
        Step(name: "untrusted", summary: "default handling rejects an untrusted server before any request byte") {
            try await DemoTrustSteps.untrusted($0)
        },
        Step(
            name: "bundled-certificate",
            summary: "trusting a self-signed server by comparing with a bundled certificate"
        ) {
            try await DemoTrustSteps.bundledCertificate($0)
        },
        Step(name: "pinning", summary: "a public-key pin set passes, then refuses a rotated key and reports it") {
            try await DemoTrustSteps.pinning($0)
        },
        Step(name: "client-certificate", summary: "a client certificate from PKCS#12 answers the server's request") {
            try await DemoClientCertificateSteps.clientCertificate($0)
        },
        Step(name: "proxy", summary: "an authenticating HTTPS proxy: 407 answered, CONNECT, TLS inside TLS") {
            try await DemoProxySteps.proxy($0)
        },
        Step(
            name: "permanent",
            summary: "a permanent credential kept in the keyring (or a file) and reused by a later run"
        ) {
            try await DemoStorageSteps.permanent($0)
        },
        Step(name: "resumption", summary: "a resumed TLS session still goes through the trust decision") {
            try await DemoTrustSteps.resumption($0)
        },
    ]

    static func run(arguments: [String]) async -> ExitCode {
        var selected = steps
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--list":
                for step in steps { print("\(step.name): \(step.summary)") }
                return .ok
            case "--step":
                guard index + 1 < arguments.count else {
                    Output.error("--step needs a step name (see sesame demo --list)")
                    return .usage
                }
                let name = arguments[index + 1]
                guard let step = steps.first(where: { $0.name == name }) else {
                    Output.error("no demo step '\(name)'; the steps are \(steps.map(\.name).joined(separator: ", "))")
                    return .usage
                }
                selected = [step]
                index += 1
            default:
                Output.error("unknown demo option '\(arguments[index])'")
                return .usage
            }
            index += 1
        }

        let context: DemoContext
        do {
            context = try DemoContext()
        } catch {
            Output.error("could not set up the demo: \(error)")
            return .failure
        }
        print("Sesame \(Sesame.version) on \(Sesame.openSSLVersion); test PKI generated for this run\n")
        var failed: [String] = []
        for step in selected {
            print("== \(step.name): \(step.summary)")
            do {
                try await step.run(context)
                print("   ok\n")
            } catch {
                print("   FAILED: \(error)\n")
                failed.append(step.name)
            }
        }
        context.cleanUp()
        if failed.isEmpty {
            print("all \(selected.count) step(s) behaved")
            return .ok
        }
        print("misbehaved: \(failed.joined(separator: ", "))")
        return .failure
    }
}

/// What every demo step shares: the PKI, a scratch folder, and a place to print.
final class DemoContext: Sendable {
    let pki: TestPKI
    let directory: URL

    init() throws {
        pki = try TestPKI()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Trusts only the PKI's root, like `SecTrustSetAnchorCertificates` with a bundled CA.
    var privateAnchorConfiguration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .anchors([pki.root.certificate])
        return configuration
    }

    func say(_ line: String) { print("   * \(line)") }

    /// `https://localhost:PORT/PATH` for a demo server.
    func url(port: Int, path: String) throws -> URL {
        guard let url = URL(string: "https://localhost:\(port)\(path)") else {
            throw DemoFailure("no URL for port \(port) and path \(path)")
        }
        return url
    }

    /// A session trusting the demo's private root, with a fresh in-memory credential storage,
    /// that says each password challenge and who answered it.
    func session(delegate: (any SessionTaskDelegate)?) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls = privateAnchorConfiguration
        configuration.credentialStorage = CredentialStorage()
        configuration.eventObserver = { [self] event in
            if case .challenge(let trace) = event, trace.protectionSpace.authenticationMethod != .serverTrust {
                say("challenge \(trace)")
            }
        }
        return Session(configuration: configuration, delegate: delegate)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }
}

/// A step's expectation that did not hold.
struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw DemoFailure(message()) }
}
