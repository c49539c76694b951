import FoundationEssentials
import Sesame

/// Everything one fetch needs, built from the parsed options in one place: the session's
/// configuration, the request, where the body goes, and the helpers that report on
/// authentication and save cookies afterwards. Any problem with the options' files (certificates,
/// keys, cookie and credential stores) is thrown from ``make(_:)``, named, for ``ExitCode`` to map.
struct FetchPlan {
    let configuration: SessionConfiguration
    let request: HTTPRequest
    let sink: BodySink
    let authentication: FetchAuthentication
    let cookies: FetchCookies

    static func make(_ options: FetchOptions, identity: Identity? = nil) throws -> FetchPlan {
        let cookies = try FetchCookies(options: options)
        let authentication = try FetchAuthentication(options: options)
        var request = try authentication.offering(to: try FetchBody.request(options))
        if let literal = cookies.literal, !request.headers.contains("Cookie") {
            request.headers.add(name: "Cookie", value: literal)
        }
        var configuration = try FetchTrust.configuration(options)
        if let identity {
            configuration.clientIdentities = ["*": identity]
        }
        (configuration.proxy, configuration.proxyAuthenticationMethods) = try FetchConnectionOptions.proxy(options)
        // As curl: no cookies unless -b or -c.
        configuration.cookieStore = cookies.store
        configuration.credentialStorage = authentication.storage
        configuration.authenticationMethods = authentication.methods
        configuration.negotiate = NegotiateOptions(delegation: options.delegation, allowsNTLM: options.spnegoNTLM)
        configuration.usesNetrc = options.usesNetrc
        configuration.netrcFile = options.netrcFile.map { URL(fileURLWithPath: $0) }
        configuration.httpVersion = options.httpVersion
        configuration.bearerAuthentication = try FetchBearer.authentication(options, for: request.url)
        let verbose = options.verbose
        configuration.eventObserver = { event in
            authentication.observe(event)
            if verbose { Verbose.print(event) }
        }
        return FetchPlan(
            configuration: configuration,
            request: request,
            sink: try BodySink(options: options),
            authentication: authentication,
            cookies: cookies
        )
    }
}
