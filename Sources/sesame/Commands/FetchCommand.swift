import Foundation
import Sesame

/// `sesame [fetch] URL`: one request, curl's way.
enum FetchCommand {
    static func run(arguments: [String]) async -> ExitCode {
        let options: FetchOptions
        do {
            options = try FetchOptions.parse(arguments)
        } catch {
            Output.error("\(error)")
            return .usage
        }
        var configuration: SessionConfiguration
        var request: HTTPRequest
        let authentication: FetchAuthentication
        let cookies: FetchCookies
        do {
            request = try makeRequest(options)
            cookies = try FetchCookies(options: options)
            configuration = try makeConfiguration(options)
            authentication = try FetchAuthentication(options: options)
            try authentication.apply(to: &configuration, request: &request, options: options)
            cookies.apply(to: &configuration, request: &request)
            let verbose = options.verbose
            configuration.eventObserver = { event in
                authentication.observe(event)
                if verbose { Verbose.print(event) }
            }
        } catch let error as FetchConnectionOptions.IdentityError {
            Output.error("\(error)")
            return .clientCertificate
        } catch let error as SesameError {
            // Setting up reads files (certificates, keys, cookie and credential stores): their
            // errors are the user's input, never the server's.
            Output.error("\(error)")
            return ExitCode(setUpError: error)
        } catch {
            Output.error("\(error)")
            return .usage
        }
        if options.insecure {
            Output.error(
                "warning: --insecure: the server's certificate is NOT checked; anyone on the path can read and change this exchange"
            )
        }
        let session = Session(configuration: configuration)
        let sink: BodySink
        do {
            sink = try BodySink(options: options)
        } catch {
            Output.error("\(error)")
            return .failure
        }
        let delegate = FetchDelegate(options: options, sink: sink)
        let outcome: (any Error)? = await withCheckedContinuation { continuation in
            delegate.completion = { continuation.resume(returning: $0) }
            session.dataTask(with: request, delegate: delegate).resume()
        }
        if let problem = cookies.save() {
            Output.error(problem)
            return .failure
        }
        if outcome == nil,
            let exit = authentication.finish(
                finalStatus: delegate.finalStatus,
                finalURL: delegate.finalURL ?? request.url,
                requestURL: request.url
            )
        {
            sink.discard()
            return exit
        }
        return finish(outcome, options: options, delegate: delegate, sink: sink)
    }

    private static func finish(
        _ outcome: (any Error)?,
        options: FetchOptions,
        delegate: FetchDelegate,
        sink: BodySink
    )
        -> ExitCode
    {
        let quiet = options.silent && !options.showError
        if let status = delegate.failedStatus {
            sink.discard()
            if !quiet { Output.error("the requested URL returned error: \(status)") }
            return .httpError
        }
        if let problem = delegate.decodeFailure {
            sink.discard()
            if !quiet { Output.error(problem) }
            return .failure
        }
        guard let outcome else {
            do {
                try sink.commit()
            } catch {
                if !quiet { Output.error("\(error)") }
                return .failure
            }
            return .ok
        }
        sink.discard()
        guard let error = outcome as? SesameError else {
            if !quiet { Output.error("\(outcome)") }
            return .failure
        }
        if !quiet { Output.error("\(error)") }
        return ExitCode(error)
    }

    static func makeConfiguration(_ options: FetchOptions) throws -> SessionConfiguration {
        var configuration = SessionConfiguration.default
        configuration.followsRedirects = options.followRedirects
        configuration.maximumRedirects = options.maximumRedirects < 0 ? Int.max : options.maximumRedirects
        configuration.defaultHeaders = ["User-Agent": "sesame/\(Sesame.version)", "Accept": "*/*"]
        if let timeout = options.connectTimeout { configuration.connectTimeout = timeout }
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
        try configureTrust(&configuration, options)
        try FetchConnectionOptions.apply(to: &configuration, options)
        configuration.cookieStore = nil  // as curl: no cookies unless -b or -c (FetchCookies)
        if options.insecure {
            configuration.handshakeHooks.serverTrust = { _ in true }
            configuration.tls.stapledOCSP = .ignore
        }
        return configuration
    }

    /// `--pin-cert`, `--pinning-mode`, `--pinnedpubkey`, `--crl` and `--no-validate-domain`: one
    /// evaluator for every host, all of whose checks must pass.
    private static func configureTrust(_ configuration: inout SessionConfiguration, _ options: FetchOptions) throws {
        var evaluators: [any ServerTrustEvaluating] = []
        if !options.pinnedCertificateFiles.isEmpty || options.pinningMode != nil {
            var pinned = Set<Certificate>()
            for file in options.pinnedCertificateFiles { pinned.formUnion(try Certificate.load(contentsOf: file)) }
            let mode = options.pinningMode ?? .publicKey
            guard mode == .none || !pinned.isEmpty else {
                throw CommandError("--pinning-mode \(mode) needs --pin-cert FILE")
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
        guard !evaluators.isEmpty else { return }
        configuration.serverTrustManager = ServerTrustManager(
            allHostsMustBeEvaluated: false,
            evaluators: [:],
            defaultEvaluator: evaluators.count == 1 ? evaluators[0] : CompositeTrustEvaluator(evaluators)
        )
    }

    private static func certificates(inDirectory path: String) throws -> [Certificate] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw CommandError("'\(path)': not a readable directory")
        }
        var result: [Certificate] = []
        for name in names.sorted() {
            let file = (path as NSString).appendingPathComponent(name)
            // Hashed directories hold links and non-certificates too; take what parses.
            if let certificates = try? Certificate.load(contentsOf: file) { result += certificates }
        }
        guard !result.isEmpty else { throw CommandError("'\(path)': no certificates found") }
        return result
    }

    static func makeRequest(_ options: FetchOptions) throws -> HTTPRequest {
        // safe: parse() refuses options without a URL.
        var request = HTTPRequest(url: options.url!)
        try FetchBody.apply(to: &request, options)
        if let method = options.method { request.method = method }
        for (name, value) in options.headers { request.headers.add(name: name, value: value) }
        return request
    }
}
