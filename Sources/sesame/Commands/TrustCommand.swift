import FoundationEssentials
import Glibc
import Sesame

/// `sesame trust URL [--cacert F]`: connect, and explain the server's chain, its evaluation with
/// every reason, and pins ready to paste. `sesame trust evaluate --leaf F ...`: the same offline.
/// Exit 0 when trusted, 4 when not.
enum TrustCommand {
    private static let arguments = Arguments(
        valued: ([
            "--cacert", "--leaf", "--intermediates", "--anchors", "--host", "--ip", "--at", "--max-depth", "--crl",
            "--ocsp",
        ] as Set<String>).union(CertificatePolicyOptions.valued),
        switches: (["--json", "--no-validate-domain", "-v", "--verbose"] as Set<String>).union(
            CertificatePolicyOptions.switches
        )
    )

    static func run(arguments: [String]) async -> ExitCode {
        var values: [String: [String]] = [:]
        var switches: Set<String> = []
        var positionals: [String] = []
        do {
            for item in try Self.arguments.parse(arguments) {
                switch item {
                case .positional(let text): positionals.append(text)
                case .option(let name, let value?): values[name, default: []].append(value)
                case .option(let name, nil): switches.insert(name)
                }
            }
            let policies = try CertificatePolicyOptions.requirements(
                policies: values["--policy"] ?? [],
                switches: switches
            )
            if positionals.first == "evaluate" {
                return try evaluateOffline(
                    values,
                    policies: policies,
                    json: switches.contains("--json"),
                    verbose: switches.contains("-v") || switches.contains("--verbose")
                )
            }
            guard positionals.count == 1, let url = URL(string: positionals[0]), url.scheme?.lowercased() == "https",
                let host = url.host(percentEncoded: false)
            else { throw Arguments.UsageError(description: "usage: sesame trust https://HOST[:PORT]/ [--cacert FILE]") }
            return try await explain(
                url: url,
                host: host,
                values: values,
                policies: policies,
                json: switches.contains("--json")
            )
        } catch {
            Output.error("\(error)")
            return ExitCode(error)
        }
    }

    /// Connects once, keeps the chain the server sent, and evaluates it.
    private static func explain(
        url: URL,
        host: String,
        values: [String: [String]],
        policies: CertificatePolicyRequirements,
        json: Bool
    ) async throws -> ExitCode {
        var configuration = SessionConfiguration.default
        configuration.tls.certificatePolicies = policies
        let anchors = try (values["--cacert"] ?? []).flatMap { try Certificate.load(contentsOf: $0) }
        if !anchors.isEmpty { configuration.tls.trustRoots = .anchors(anchors) }
        configuration.credentialStorage = nil
        let seen = LockedValue<ServerTrust?>(nil)
        // Decide as default handling does, keeping the chain to explain it (only a HEAD is sent, and
        // only to a trusted server).
        configuration.handshakeHooks.serverTrust = { trust in
            seen.withLock { $0 = trust }
            return trust.evaluate().isTrusted
        }
        let staple = LockedValue<OCSPStatus?>(nil)
        configuration.eventObserver = { event in
            if case .tlsEstablished(_, let info) = event { staple.withLock { $0 = info.stapledOCSPStatus } }
        }
        var request = HTTPRequest(url: url)
        request.method = "HEAD"
        let session = Session(configuration: configuration)
        var connectError: (any Error)?
        do {
            _ = try await session.data(for: request)
        } catch {
            connectError = error
        }
        guard let trust = seen.withLock({ $0 }) else {
            if let connectError { throw connectError }
            throw CommandError("\(host): no certificate was received")
        }
        var result = trust.evaluate()
        result.ocspStatus = staple.withLock { $0 }
        // A check after the decision (the stapled OCSP response) can still refuse the server.
        var lateRefusal: String? = nil
        if result.isTrusted, let error = connectError as? SesameError, error.code == .serverTrustRejected {
            lateRefusal = error.detail
        }
        if json {
            printJSON(trust.peerChain, result, lateRefusal: lateRefusal)
        } else {
            printText(trust.peerChain, result, origin: "\(host):\(trust.port)", lateRefusal: lateRefusal)
        }
        return result.isTrusted && lateRefusal == nil ? .ok : .serverTrust
    }

    private static func evaluateOffline(
        _ values: [String: [String]],
        policies: CertificatePolicyRequirements,
        json: Bool,
        verbose: Bool
    ) throws -> ExitCode {
        guard let leafFile = values["--leaf"]?.first, let anchorFiles = values["--anchors"] else {
            throw Arguments.UsageError(
                description:
                    "usage: sesame trust evaluate --leaf F [--intermediates F] --anchors F [--host H | --ip A] [--at RFC3339] [--max-depth N] [--crl F] [--ocsp F] [--policy OID] [--explicit-policy] [--inhibit-policy-mapping] [--inhibit-any-policy] [--json] [-v]"
            )
        }
        let chain =
            try Certificate.load(contentsOf: leafFile)
            + (values["--intermediates"] ?? []).flatMap { try Certificate.load(contentsOf: $0) }
        let anchors = try anchorFiles.flatMap { try Certificate.load(contentsOf: $0) }
        let crls = try (values["--crl"] ?? []).flatMap { try CertificateRevocationList.load(contentsOf: $0) }
        let ocspResponses = try (values["--ocsp"] ?? []).map { Data(try UserFile.read($0, as: .ocspResponse)) }
        var date: Date?
        if let text = values["--at"]?.first {
            do {
                date = try ValidationTime.parse(text)
            } catch let error as SesameError {
                throw Arguments.UsageError(description: "--at: \(error.detail)")
            }
        }
        var maximumDepth: Int?
        if let text = values["--max-depth"]?.first {
            guard let depth = Int(text), depth >= 0 else {
                throw Arguments.UsageError(
                    description: "--max-depth needs a whole number of intermediates (0 or more), not '\(text)'"
                )
            }
            maximumDepth = depth
        }
        let result = CertificateChainEvaluator.evaluate(
            chain: chain,
            roots: .anchors(anchors),
            host: values["--host"]?.first ?? values["--ip"]?.first,
            at: date,
            maximumDepth: maximumDepth,
            crls: crls,
            ocspResponses: ocspResponses,
            policies: policies
        )
        json
            ? printJSON(chain, result)
            : printText(chain, result, origin: values["--host"]?.first ?? values["--ip"]?.first)
        if verbose && !json {
            let valid = result.validPolicies.map { $0 == CertificatePolicyRequirements.anyPolicy ? "anyPolicy" : $0 }
            print("valid policies: " + (valid.isEmpty ? "none" : valid.joined(separator: ", ")))
            print("candidate paths (\(result.candidatePaths.count)):")
            for (index, path) in result.candidatePaths.enumerated() { print("  [\(index + 1)] \(path)") }
        } else if !json, !result.isTrusted, !result.verifiedChain.isEmpty {
            // The failures above are the best path's (of \(result.candidatePaths.count) built; -v shows each).
            print("best path: " + result.verifiedChain.map { "\($0.subject)" }.joined(separator: " <- "))
        }
        return result.isTrusted ? .ok : .serverTrust
    }

    private static func printText(
        _ chain: [Certificate],
        _ result: TrustEvaluationResult,
        origin: String?,
        lateRefusal: String? = nil
    ) {
        if let origin { print("server: \(origin)") }
        print("chain as sent (leaf first):")
        for (index, certificate) in chain.enumerated() {
            print("  [\(index)] subject: \(certificate.subject)")
            print("      issuer:  \(certificate.issuer)")
            print("      valid:   \(certificate.notValidBefore) to \(certificate.notValidAfter)")
            let names = certificate.subjectAlternativeNames.map(\.description)
            if !names.isEmpty { print("      SANs:    \(names.joined(separator: ", "))") }
            print("      pin:     sha256/\(certificate.publicKey.sha256Pin)")
        }
        print("evaluation: \(result.isTrusted && lateRefusal == nil ? "trusted" : "NOT trusted")")
        for failure in result.failures { print("  - \(failure)") }
        if let lateRefusal { print("  - \(lateRefusal)") }
        if let status = result.ocspStatus { print("OCSP: \(status)") }
        if result.isTrusted && lateRefusal == nil {
            print("validated chain: " + result.verifiedChain.map { "\($0.subject)" }.joined(separator: " <- "))
            let pins = result.verifiedChain.map { "sha256//" + $0.publicKey.sha256Pin }
            print("pins (leaf first), for --pinnedpubkey or PinSet (keep a backup pin):")
            for pin in pins { print("  \(pin)") }
        }
    }

    private static func printJSON(_ chain: [Certificate], _ result: TrustEvaluationResult, lateRefusal: String? = nil) {
        struct Report: Encodable {
            struct Entry: Encodable {
                let subject: String
                let issuer: String
                let notBefore: Date
                let notAfter: Date
                let subjectAlternativeNames: [String]
                let pin: String
            }
            let trusted: Bool
            let failures: [String]
            let ocsp: String?
            let chain: [Entry]
            let validatedChainPins: [String]
            let validPolicies: [String]
        }
        let report = Report(
            trusted: result.isTrusted && lateRefusal == nil,
            failures: result.failures.map(\.description) + (lateRefusal.map { [$0] } ?? []),
            ocsp: result.ocspStatus?.description,
            chain: chain.map {
                Report.Entry(
                    subject: "\($0.subject)",
                    issuer: "\($0.issuer)",
                    notBefore: $0.notValidBefore,
                    notAfter: $0.notValidAfter,
                    subjectAlternativeNames: $0.subjectAlternativeNames.map(\.description),
                    pin: "sha256/" + $0.publicKey.sha256Pin
                )
            },
            validatedChainPins: result.verifiedChain.map { "sha256/" + $0.publicKey.sha256Pin },
            validPolicies: result.validPolicies
        )
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(report) { print(String(decoding: data, as: UTF8.self)) }
    }
}
