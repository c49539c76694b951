import Foundation
import Sesame

/// `--cacert`, `--capath`, `--anchors`, `--anchors-only`, `--cert-status`, `--pin-cert`,
/// `--pinning-mode`, `--pinnedpubkey`, `--crl`, `--no-validate-domain` and `-k/--insecure`, with
/// the redirect, timeout and header basics of every fetch.
enum FetchTrust {
    /// The configuration the options describe, before the identity, proxy, cookie and credential
    /// choices of ``FetchPlan``: redirects, timeouts, default headers, trust roots, pins and CRLs.
    static func configuration(_ options: FetchOptions) throws -> SessionConfiguration {
        var configuration = SessionConfiguration.default
        configuration.followsRedirects = options.followRedirects
        configuration.maximumRedirects = options.maximumRedirects < 0 ? Int.max : options.maximumRedirects
        configuration.defaultHeaders = ["User-Agent": "sesame/\(Sesame.version)", "Accept": "*/*"]
        if let timeout = options.connectTimeout { configuration.connectTimeout = timeout }
        if let timeout = options.expectContinueTimeout { configuration.expectContinueTimeout = timeout }
        if let timeout = options.maximumTime { configuration.resourceTimeout = timeout }
        var anchors: [Certificate] = []
        if let file = options.caFile { anchors += try Certificate.load(contentsOf: file) }
        if let directory = options.caPath { anchors += try certificates(inDirectory: directory) }
        for file in options.anchorFiles { anchors += try Certificate.load(contentsOf: file) }
        if options.caFile != nil || options.caPath != nil || options.anchorsOnly {
            // curl's meaning for --cacert/--capath: these replace the default bundle.
            configuration.tls.trustRoots = .anchors(anchors)
        } else if !anchors.isEmpty {
            // --anchors alone: SecTrustSetAnchorCertificatesOnly(false), the system roots and these.
            configuration.tls.trustRoots = .system(adding: anchors)
        }
        if options.requiresStapledOCSP { configuration.tls.stapledOCSP = .require }
        configuration.serverTrustManager = try trustManager(options)
        if options.insecure {
            // Loud by name: every server is accepted, with no check at all.
            configuration.serverTrustManager = ServerTrustManager(
                allHostsMustBeEvaluated: false,
                evaluators: [:],
                defaultEvaluator: InsecureDisabledTrustEvaluator()
            )
            configuration.tls.stapledOCSP = .ignore
        }
        return configuration
    }

    /// `--pin-cert`, `--pinning-mode`, `--pinnedpubkey`, `--crl` and `--no-validate-domain`: one
    /// evaluator for every host, all of whose checks must pass.
    private static func trustManager(_ options: FetchOptions) throws -> ServerTrustManager? {
        var evaluators: [any ServerTrustEvaluating] = []
        if !options.pinnedCertificateFiles.isEmpty || options.pinningMode != nil {
            var pinned = Set<Certificate>()
            for file in options.pinnedCertificateFiles { pinned.formUnion(try Certificate.load(contentsOf: file)) }
            let mode = options.pinningMode ?? .publicKey
            guard mode == .none || !pinned.isEmpty else {
                throw Arguments.UsageError(description: "--pinning-mode \(mode) needs --pin-cert FILE")
            }
            var policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: pinned)
            policy.validatesDomainName = options.validatesDomain
            evaluators.append(policy)
        }
        let crls = try options.crlFiles.map { try CertificateRevocationList.load(contentsOf: $0) }
        if !crls.isEmpty {
            evaluators.append(RevocationTrustEvaluator(crls: crls, validatesHost: options.validatesDomain))
        }
        if !options.pinnedPublicKeys.isEmpty {
            evaluators.append(
                try PublicKeyPinsTrustEvaluator(
                    pins: Set(options.pinnedPublicKeys),
                    validatesHost: options.validatesDomain
                )
            )
        }
        if evaluators.isEmpty && !options.validatesDomain {
            evaluators.append(DefaultTrustEvaluator(validatesHost: false))
        }
        guard !evaluators.isEmpty else { return nil }
        return ServerTrustManager(
            allHostsMustBeEvaluated: false,
            evaluators: [:],
            defaultEvaluator: evaluators.count == 1 ? evaluators[0] : CompositeTrustEvaluator(evaluators)
        )
    }

    private static func certificates(inDirectory path: String) throws -> [Certificate] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw CommandError("--capath '\(path)': not a readable directory")
        }
        var result: [Certificate] = []
        for name in names.sorted() {
            let file = (path as NSString).appendingPathComponent(name)
            // Hashed directories hold links and non-certificates too; take what parses.
            if let certificates = try? Certificate.load(contentsOf: file) { result += certificates }
        }
        guard !result.isEmpty else {
            throw CommandError("--capath '\(path)': no certificates found")
        }
        return result
    }
}
