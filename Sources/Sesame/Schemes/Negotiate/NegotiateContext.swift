internal import CSesameShims
import FoundationEssentials
import Glibc

/// One Negotiate exchange (RFC 4559) with one server: a GSSAPI security context over SPNEGO for
/// the service `HTTP@host`, the host as the URL names it (no reverse lookup, as curl does).
///
/// Each ``step(_:)`` may reach the KDC, so the driver runs it on a blocking-work thread; the
/// task's state machine only reads the token it produced. A context serves one exchange and is
/// never sent preemptively: a new challenge makes a new context.
final class NegotiateContext: SecurityExchange, @unchecked Sendable {
    // @unchecked: the GSSAPI handles are touched only while `handles`' lock is held.

    /// Whose Kerberos credentials answer.
    enum Source: Sendable, Equatable {
        /// The user's ticket cache (`KRB5CCNAME`, else the default cache).
        case ticketCache
        /// A ticket acquired with this password (`gss_acquire_cred_with_password`); `user` is
        /// `name` or `name@REALM`.
        case password(user: String, password: String)
    }

    let host: String
    let source: Source
    let options: NegotiateOptions
    private let handles = LockedValue(Handles())
    /// The password's bytes and a NUL after them, for as long as a credential made from it lives:
    /// a GSSAPI mechanism may read them after the call that was given them, and as a C string
    /// (gss-ntlmssp does both). Zeroed when freed.
    private let passwordBytes: UnsafeMutableRawBufferPointer?
    private let passwordLength: Int

    private struct Handles {
        var name: OpaquePointer?
        var credential: OpaquePointer?
        var context: OpaquePointer?
        var token: [UInt8] = []
        var isEstablished = false
        var steps = 0
        /// The channel binding of the first step, which every later step repeats.
        var binding: [UInt8]?
    }

    init(host: String, source: Source, options: NegotiateOptions) {
        self.host = host
        self.source = source
        self.options = options
        if case .password(_, let password) = source {
            let utf8 = Array(password.utf8)
            let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: utf8.count + 1, alignment: 1)
            bytes.copyBytes(from: utf8 + [0])
            (passwordBytes, passwordLength) = (bytes, utf8.count)
        } else {
            (passwordBytes, passwordLength) = (nil, 0)
        }
    }

    deinit {
        if case .success(let api) = GSSAPI.shared {
            handles.withLock { handles in
                var minor: UInt32 = 0
                if handles.context != nil { _ = api.deleteSecContext(&minor, &handles.context, nil) }
                if handles.name != nil { _ = api.releaseName(&minor, &handles.name) }
                if handles.credential != nil { _ = api.releaseCred(&minor, &handles.credential) }
            }
        }
        if let passwordBytes {
            passwordBytes.initializeMemory(as: UInt8.self, repeating: 0)
            passwordBytes.deallocate()
        }
    }

    /// The token the last step produced, to send in `Authorization: Negotiate` (empty when the
    /// last step produced none).
    var token: [UInt8] { handles.withLock { $0.token } }

    /// Whether the context is complete: the server's last token (if any) verified.
    var isEstablished: Bool { handles.withLock { $0.isEstablished } }

    /// The service the context is for.
    var service: String { "HTTP@\(host)" }

    var scheme: String { "Negotiate" }
    var provesServer: Bool { true }
    var summary: String { "Negotiate (\(service))" }

    /// Runs the next step of the context with the server's token (none for the first step).
    /// Blocks: it may acquire a ticket from the KDC.
    /// - Throws: ``SesameError/Code/negotiateFailed`` with GSSAPI's own words.
    func step(_ input: [UInt8]?, channelBinding: [UInt8]?) throws(SesameError) {
        let api = try GSSAPI.shared.get()
        let outcome = handles.withLock { handles -> Result<Void, SesameError> in
            // SPNEGO takes a few legs; a server that keeps asking is not answered forever.
            guard handles.steps < 8 else {
                return .failure(SesameError(.negotiateFailed, "\(service) asked for more than 8 Negotiate steps"))
            }
            if handles.steps == 0 { handles.binding = channelBinding }
            handles.steps += 1
            do throws(SesameError) {
                if handles.name == nil { handles.name = try importName(api, service, GSSAPI.hostBasedService) }
                if handles.credential == nil { handles.credential = try acquireCredential(api) }
                try initiate(api, input, &handles)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    private func initiate(_ api: GSSAPI, _ input: [UInt8]?, _ handles: inout Handles) throws(SesameError) {
        var minor: UInt32 = 0
        var output = GSSAPI.Buffer(length: 0, value: nil)
        var flags = GSSAPI.mutualFlag
        switch options.delegation {
        case .none: break
        case .policy: flags |= GSSAPI.delegatePolicyFlag
        case .always: flags |= GSSAPI.delegateFlag
        }
        let (name, credential) = (handles.name, handles.credential)
        let major = withBindings(handles.binding) { bindings in
            withOptionalBuffer(input) { inputBuffer in
                api.initSecContext(
                    &minor,
                    credential,
                    &handles.context,
                    name,
                    GSSAPI.spnego,
                    flags,
                    0,
                    bindings,
                    inputBuffer,
                    nil,
                    &output,
                    nil,
                    nil
                )
            }
        }
        let token = api.take(&output)
        guard !GSSAPI.failed(major) else {
            // SPNEGO says only that no mechanism is left; on a first step Kerberos says why.
            let reason = (input == nil ? kerberosRefusal(api, name) : nil) ?? api.message(major: major, minor: minor)
            throw SesameError(.negotiateFailed, "no Negotiate token for \(service) from \(describe(source)): \(reason)")
        }
        handles.token = token
        handles.isEstablished = major & GSSAPI.continueNeeded == 0
    }

    /// Credentials for SPNEGO that offer Kerberos only, or Kerberos and then NTLM when allowed.
    private func acquireCredential(_ api: GSSAPI) throws(SesameError) -> OpaquePointer? {
        var (major, minor, credential) = try acquire(api, GSSAPI.spnego)
        guard !GSSAPI.failed(major) else {
            let reason = kerberosRefusal(api, nil) ?? api.message(major: major, minor: minor)
            throw SesameError(.negotiateFailed, "no Kerberos credentials from \(describe(source)): \(reason)")
        }
        let mechanisms = [GSSAPI.kerberos.pointee] + (options.allowsNTLM ? [GSSAPI.ntlmssp.pointee] : [])
        major = mechanisms.withUnsafeBufferPointer { elements in
            var set = GSSAPI.OIDSet(
                count: elements.count,
                elements: UnsafeMutablePointer(mutating: elements.baseAddress)
            )
            return api.setNegMechs(&minor, credential, &set)
        }
        guard !GSSAPI.failed(major) else {
            var ignored: UInt32 = 0
            _ = api.releaseCred(&ignored, &credential)
            throw SesameError(.negotiateFailed, "SPNEGO cannot be limited: \(api.message(major: major, minor: minor))")
        }
        return credential
    }

    /// Initiator credentials for one mechanism from the source: the statuses and the handle.
    private func acquire(
        _ api: GSSAPI,
        _ mechanism: UnsafeMutablePointer<GSSAPI.OID>
    ) throws(SesameError) -> (major: UInt32, minor: UInt32, credential: OpaquePointer?) {
        var minor: UInt32 = 0
        var credential: OpaquePointer?
        var mechanisms = GSSAPI.OIDSet(count: 1, elements: mechanism)
        switch source {
        case .ticketCache:
            let major = api.acquireCred(&minor, nil, 0, &mechanisms, GSSAPI.initiate, &credential, nil, nil)
            return (major, minor, credential)
        case .password(let user, _):
            var name = try importName(api, user, GSSAPI.userName)
            defer {
                var ignored: UInt32 = 0
                _ = api.releaseName(&ignored, &name)
            }
            var buffer = GSSAPI.Buffer(length: passwordLength, value: passwordBytes?.baseAddress)
            let major = api.acquireCredWithPassword(
                &minor,
                name,
                &buffer,
                0,
                &mechanisms,
                GSSAPI.initiate,
                &credential,
                nil,
                nil
            )
            return (major, minor, credential)
        }
    }

    /// Why Kerberos itself refuses the source for `target` (no ticket, a wrong password, an
    /// unknown principal), which SPNEGO reports only as "cannot find mechanisms"; nil when it
    /// does not refuse.
    private func kerberosRefusal(_ api: GSSAPI, _ target: OpaquePointer?) -> String? {
        guard var (major, minor, credential) = try? acquire(api, GSSAPI.kerberos) else { return nil }
        defer {
            var ignored: UInt32 = 0
            if credential != nil { _ = api.releaseCred(&ignored, &credential) }
        }
        guard !GSSAPI.failed(major) else { return api.message(major: major, minor: minor) }
        guard let target else { return nil }
        var context: OpaquePointer?
        var output = GSSAPI.Buffer(length: 0, value: nil)
        major = api.initSecContext(
            &minor,
            credential,
            &context,
            target,
            GSSAPI.kerberos,
            GSSAPI.mutualFlag,
            0,
            nil,
            nil,
            nil,
            &output,
            nil,
            nil
        )
        _ = api.take(&output)
        var ignored: UInt32 = 0
        if context != nil { _ = api.deleteSecContext(&ignored, &context, nil) }
        return GSSAPI.failed(major) ? api.message(major: major, minor: minor) : nil
    }

    private func importName(
        _ api: GSSAPI,
        _ text: String,
        _ type: UnsafeMutablePointer<GSSAPI.OID>
    ) throws(SesameError) -> OpaquePointer? {
        var minor: UInt32 = 0
        var name: OpaquePointer?
        var bytes = Array(text.utf8)
        let major = bytes.withUnsafeMutableBytes { raw in
            var buffer = GSSAPI.Buffer(length: raw.count, value: raw.baseAddress)
            return api.importName(&minor, &buffer, type, &name)
        }
        guard !GSSAPI.failed(major) else {
            throw SesameError(
                .negotiateFailed,
                "'\(text)' is not a GSSAPI name: \(api.message(major: major, minor: minor))"
            )
        }
        return name
    }

    private func describe(_ source: Source) -> String {
        switch source {
        case .ticketCache: "the ticket cache"
        case .password(let user, _): "the password of \(user)"
        }
    }
}

/// Calls `body` with channel bindings that carry `applicationData` only (no addresses, as HTTP
/// clients send them), or with none.
private func withBindings<Result>(
    _ applicationData: [UInt8]?,
    _ body: (UnsafeMutablePointer<GSSAPI.Bindings>?) -> Result
) -> Result {
    guard var applicationData else { return body(nil) }
    return applicationData.withUnsafeMutableBytes { raw in
        let empty = GSSAPI.Buffer(length: 0, value: nil)
        var bindings = GSSAPI.Bindings(
            initiator_addrtype: 0,
            initiator_address: empty,
            acceptor_addrtype: 0,
            acceptor_address: empty,
            application_data: GSSAPI.Buffer(length: raw.count, value: raw.baseAddress)
        )
        return body(&bindings)
    }
}

/// Calls `body` with a GSSAPI buffer over `bytes`, or with none.
private func withOptionalBuffer<Result>(
    _ bytes: [UInt8]?,
    _ body: (UnsafeMutablePointer<GSSAPI.Buffer>?) -> Result
) -> Result {
    guard var bytes else { return body(nil) }
    return bytes.withUnsafeMutableBytes { raw in
        var buffer = GSSAPI.Buffer(length: raw.count, value: raw.baseAddress)
        return body(&buffer)
    }
}
