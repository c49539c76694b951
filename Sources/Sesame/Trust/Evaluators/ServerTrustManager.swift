/// Per-host trust evaluators (Alamofire's `ServerTrustManager`): keys are exact host names or
/// wildcards (`*.example.com` covers every name below example.com, not example.com itself).
public struct ServerTrustManager: Sendable {
    /// When true, a host without an evaluator is refused instead of getting default evaluation.
    public let allHostsMustBeEvaluated: Bool
    /// The evaluators by host: an exact host, or `*.domain` for its subdomains at any depth (the
    /// longest matching pattern wins).
    public let evaluators: [String: any ServerTrustEvaluating]
    /// The evaluator for hosts without a key of their own (when not every host must have one).
    public let defaultEvaluator: (any ServerTrustEvaluating)?

    /// A manager with these evaluators; hosts with none use `defaultEvaluator`, or, when
    /// `allHostsMustBeEvaluated` is true and no default is given, are refused.
    public init(
        allHostsMustBeEvaluated: Bool = true,
        evaluators: [String: any ServerTrustEvaluating],
        defaultEvaluator: (any ServerTrustEvaluating)? = nil
    ) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.evaluators = Dictionary(evaluators.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        self.defaultEvaluator = defaultEvaluator
    }

    /// The evaluator for `host`: the exact key, else the most specific wildcard.
    /// - Throws: ``SesameError/Code/serverTrustRejected`` when none matches and every host must be
    ///   evaluated.
    public func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
        let host = (IPAddressText.dnsName(host) ?? IPAddressText.unbracketed(host)).lowercased()
        if let exact = evaluators[host] { return exact }
        let wildcard = evaluators.filter { key, _ in
            key.hasPrefix("*.") && host.hasSuffix(String(key.dropFirst(1)))
        }.max { $0.key.count < $1.key.count }
        if let wildcard { return wildcard.value }
        if allHostsMustBeEvaluated {
            throw SesameError(.serverTrustRejected, "\(host): no trust evaluator is configured for this host")
        }
        return defaultEvaluator
    }
}
