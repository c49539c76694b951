import FoundationEssentials
import Sesame

/// `--cacert`, `--capath`, `--anchors`, `--anchors-only`, `--cert-status`, `--pin-cert`,
/// `--pinning-mode`, `--pinnedpubkey`, `--crl`, the certificate-policy options, `--no-validate-domain`
/// and `-k/--insecure`, with
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
        configuration.tls.certificatePolicies = try CertificatePolicyOptions.requirements(
            policies: options.certificatePolicies,
            switches: options.certificatePolicySwitches
        )
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
        let crls = try options.crlFiles.flatMap { try CertificateRevocationList.load(contentsOf: $0) }
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

    /// The certificates of a CA folder. Hashed folders hold links and other files too: what is
    /// not a regular file, or holds no certificate, is left out (FIFOs and devices among them).
    private static func certificates(inDirectory path: String) throws -> [Certificate] {
        let (certificates, skipped) = try Certificate.load(contentsOfFolder: path)
        guard !certificates.isEmpty else {
            let why = skipped.isEmpty ? "" : " (skipped: \(skipped.prefix(3).joined(separator: "; ")))"
            throw CommandError("--capath '\(path)': no certificates found\(why)")
        }
        return certificates
    }
}
