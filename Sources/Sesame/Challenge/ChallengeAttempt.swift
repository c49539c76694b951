extension ChallengeResolver {
    /// A credential sent for a protection space, with who chose it and how its header is made.
    struct Attempt: Sendable {
        let space: ProtectionSpace
        let credential: Credential
        let responder: ChallengeTrace.Responder
        let authorizer: Authorizer

        /// The attempt that answers `offer` with `credential`, or why there can be none: the
        /// credential is not a password, or the scheme's parameters cannot be answered.
        static func make(
            _ credential: Credential,
            for offer: ChallengeOffer,
            responder: ChallengeTrace.Responder,
            bodyIsHashable: Bool,
            negotiate: NegotiateOptions = NegotiateOptions()
        ) -> Result<Attempt, SesameError> {
            let space = offer.space
            if space.authenticationMethod == .negotiate {
                return negotiateAttempt(credential, for: space, responder: responder, options: negotiate)
            }
            if space.authenticationMethod == .ntlm, let user = credential.user, let password = credential.password {
                let exchange = NTLMExchange(user: user, password: password)
                return .success(
                    Attempt(space: space, credential: credential, responder: responder, authorizer: .exchange(exchange))
                )
            }
            guard let user = credential.user, let password = credential.password else {
                return .failure(
                    SesameError(.unsupportedCredential, "\(space) needs a user and password, not \(credential)")
                )
            }
            let authorizer: Authorizer
            do {
                switch space.authenticationMethod {
                case .httpBasic:
                    authorizer = .fixed(try BasicAuthentication.authorization(user: user, password: password))
                case .httpDigest:
                    guard let digest = offer.digest else {
                        return .failure(
                            SesameError(.unsupportedCredential, "\(space) offered no usable Digest parameters")
                        )
                    }
                    authorizer = .digest(
                        try DigestAuthorizer(
                            challenge: digest,
                            user: user,
                            password: password,
                            bodyIsHashable: bodyIsHashable
                        )
                    )
                default:
                    return .failure(
                        SesameError(
                            .unsupportedCredential,
                            "Sesame cannot answer \(space.authenticationMethod) challenges with a password"
                        )
                    )
                }
            } catch let error as SesameError {
                return .failure(error)
            } catch {
                return .failure(SesameError(.unsupportedCredential, "\(space): \(error)"))
            }
            return .success(Attempt(space: space, credential: credential, responder: responder, authorizer: authorizer))
        }

        /// A Negotiate attempt: a new security context for the space's host, answered from the
        /// ticket cache or with a ticket acquired with the credential's password.
        private static func negotiateAttempt(
            _ credential: Credential,
            for space: ProtectionSpace,
            responder: ChallengeTrace.Responder,
            options: NegotiateOptions
        ) -> Result<Attempt, SesameError> {
            let source: NegotiateContext.Source
            if credential.isTicketCache {
                source = .ticketCache
            } else if let user = credential.user, let password = credential.password {
                source = .password(user: user, password: password)
            } else {
                return .failure(
                    SesameError(
                        .unsupportedCredential,
                        "\(space) needs a user and password, or the Kerberos ticket cache, not \(credential)"
                    )
                )
            }
            let context = NegotiateContext(host: space.host, source: source, options: options)
            return .success(
                Attempt(space: space, credential: credential, responder: responder, authorizer: .exchange(context))
            )
        }
    }

    /// Makes the header value for each request an attempt goes out with.
    enum Authorizer: Sendable {
        /// The same value every time (Basic).
        case fixed(String)
        /// Computed per request (Digest: method, URI, nonce count, body hash).
        case digest(DigestAuthorizer)
        /// The token of a multi-leg exchange (Negotiate, NTLM), one step per leg.
        case exchange(any SecurityExchange)

        /// "Basic" or "Digest SHA-256 qop=auth".
        var summary: String {
            switch self {
            case .fixed(let value): String(value.prefix { $0 != " " })
            case .digest(let digest): digest.summary
            case .exchange(let exchange): exchange.summary
            }
        }
    }
}
