internal import CSesameShims
import FoundationEssentials
import Glibc

/// The GSSAPI functions Negotiate needs, from MIT Kerberos's `libgssapi_krb5.so.2`, loaded at run
/// time (`dlopen`), so Sesame builds and runs where Kerberos is not installed. Loaded once per
/// process; the table is immutable afterwards.
struct GSSAPI: @unchecked Sendable {
    // @unchecked: C function pointers and OIDs in memory that is never freed, set once in `load()`
    // and only read afterwards.
    typealias Buffer = CSesameShims_gss_buffer_desc
    typealias OID = CSesameShims_gss_OID_desc
    typealias OIDSet = CSesameShims_gss_OID_set_desc
    typealias Bindings = CSesameShims_gss_channel_bindings
    typealias Minor = UnsafeMutablePointer<UInt32>
    /// `gss_name_t`, `gss_cred_id_t` or `gss_ctx_id_t`, written by the call.
    typealias HandleOut = UnsafeMutablePointer<OpaquePointer?>

    typealias ImportName =
        @convention(c) (Minor, UnsafeMutablePointer<Buffer>, UnsafeMutablePointer<OID>?, HandleOut) -> UInt32
    typealias InitSecContext =
        @convention(c) (
            Minor, OpaquePointer?, HandleOut, OpaquePointer?, UnsafeMutablePointer<OID>?, UInt32, UInt32,
            UnsafeMutablePointer<Bindings>?, UnsafeMutablePointer<Buffer>?,
            UnsafeMutablePointer<UnsafeMutablePointer<OID>?>?, UnsafeMutablePointer<Buffer>,
            UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<UInt32>?
        ) -> UInt32
    typealias DeleteSecContext = @convention(c) (Minor, HandleOut, UnsafeMutablePointer<Buffer>?) -> UInt32
    typealias ReleaseBuffer = @convention(c) (Minor, UnsafeMutablePointer<Buffer>) -> UInt32
    /// `gss_release_name` and `gss_release_cred`.
    typealias ReleaseHandle = @convention(c) (Minor, HandleOut) -> UInt32
    typealias DisplayStatus =
        @convention(c) (
            Minor, UInt32, Int32, UnsafeMutablePointer<OID>?, UnsafeMutablePointer<UInt32>,
            UnsafeMutablePointer<Buffer>
        ) -> UInt32
    typealias AcquireCredWithPassword =
        @convention(c) (
            Minor, OpaquePointer?, UnsafeMutablePointer<Buffer>, UInt32, UnsafeMutablePointer<OIDSet>?, Int32,
            HandleOut, UnsafeMutablePointer<UnsafeMutablePointer<OIDSet>?>?, UnsafeMutablePointer<UInt32>?
        ) -> UInt32
    typealias AcquireCred =
        @convention(c) (
            Minor, OpaquePointer?, UInt32, UnsafeMutablePointer<OIDSet>?, Int32, HandleOut,
            UnsafeMutablePointer<UnsafeMutablePointer<OIDSet>?>?, UnsafeMutablePointer<UInt32>?
        ) -> UInt32
    typealias SetNegMechs = @convention(c) (Minor, OpaquePointer?, UnsafeMutablePointer<OIDSet>) -> UInt32

    let importName: ImportName
    let initSecContext: InitSecContext
    let deleteSecContext: DeleteSecContext
    let releaseBuffer: ReleaseBuffer
    let releaseName: ReleaseHandle
    let releaseCred: ReleaseHandle
    let displayStatus: DisplayStatus
    let acquireCred: AcquireCred
    let acquireCredWithPassword: AcquireCredWithPassword
    let setNegMechs: SetNegMechs

    /// SPNEGO (RFC 4178), the mechanism HTTP Negotiate speaks (RFC 4559).
    nonisolated(unsafe) static let spnego = permanentOID([0x2B, 0x06, 0x01, 0x05, 0x05, 0x02])
    /// Kerberos 5 (RFC 4121).
    nonisolated(unsafe) static let kerberos = permanentOID([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x12, 0x01, 0x02, 0x02])
    /// NTLMSSP, as GSSAPI mechanisms such as gss-ntlmssp register it.
    nonisolated(unsafe) static let ntlmssp = permanentOID([0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0A])
    /// `GSS_C_NT_HOSTBASED_SERVICE`: names of the form `service@host`.
    nonisolated(unsafe) static let hostBasedService = permanentOID([
        0x2A, 0x86, 0x48, 0x86, 0xF7, 0x12, 0x01, 0x02, 0x01, 0x04,
    ])
    /// `GSS_C_NT_USER_NAME`: `user` or `user@REALM`.
    nonisolated(unsafe) static let userName = permanentOID([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x12, 0x01, 0x02, 0x01, 0x01])

    /// `GSS_C_INITIATE`.
    static let initiate: Int32 = 1
    /// `GSS_C_DELEG_FLAG`, `GSS_C_MUTUAL_FLAG`, `GSS_C_DELEG_POLICY_FLAG`.
    static let delegateFlag: UInt32 = 1
    static let mutualFlag: UInt32 = 2
    static let delegatePolicyFlag: UInt32 = 32768
    /// `GSS_S_CONTINUE_NEEDED`.
    static let continueNeeded: UInt32 = 1

    /// The library's file name, as Debian's `libgssapi-krb5-2` installs it.
    static let libraryName = "libgssapi_krb5.so.2"

    /// The loaded library, or why it could not be loaded (once per process).
    static let shared: Result<GSSAPI, SesameError> = Result { () throws(SesameError) in try load() }

    /// Whether a major status is an error (a calling or routine error; supplementary bits alone
    /// are not).
    static func failed(_ major: UInt32) -> Bool { major & 0xFFFF_0000 != 0 }

    /// GSSAPI's own words for a major status and its mechanism's minor status.
    func message(major: UInt32, minor: UInt32) -> String {
        var parts = statusText(major, type: 1)
        if minor != 0 { parts += statusText(minor, type: 2) }
        return parts.joined(separator: ": ")
    }

    /// The bytes of a buffer GSSAPI wrote, which is then released.
    func take(_ buffer: inout Buffer) -> [UInt8] {
        defer {
            var minor: UInt32 = 0
            _ = releaseBuffer(&minor, &buffer)
        }
        guard let value = buffer.value, buffer.length > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: value, count: buffer.length))
    }

    private func statusText(_ status: UInt32, type: Int32) -> [String] {
        var texts: [String] = []
        var context: UInt32 = 0
        // A status has a handful of messages; the bound keeps a broken library from looping.
        for _ in 0..<8 {
            var minor: UInt32 = 0
            var buffer = Buffer(length: 0, value: nil)
            let major = displayStatus(&minor, status, type, nil, &context, &buffer)
            guard !Self.failed(major) else { break }
            let text = String(decoding: take(&buffer), as: UTF8.self)
            if !text.isEmpty { texts.append(text) }
            if context == 0 { break }
        }
        return texts
    }

    private static func permanentOID(_ bytes: [UInt8]) -> UnsafeMutablePointer<OID> {
        let elements = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
        elements.initialize(from: bytes, count: bytes.count)
        let oid = UnsafeMutablePointer<OID>.allocate(capacity: 1)
        oid.initialize(to: OID(length: UInt32(bytes.count), elements: UnsafeMutableRawPointer(elements)))
        return oid
    }

    private static func load() throws(SesameError) -> GSSAPI {
        guard let handle = dlopen(libraryName, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            throw SesameError(
                .negotiateFailed,
                "Negotiate needs GSSAPI (Debian's libgssapi-krb5-2), which could not be loaded: \(reason)"
            )
        }
        var missing: [String] = []
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            guard let address = dlsym(handle, name) else {
                missing.append(name)
                return nil
            }
            return unsafeBitCast(address, to: T.self)
        }
        let importName = symbol("gss_import_name", as: ImportName.self)
        let initSecContext = symbol("gss_init_sec_context", as: InitSecContext.self)
        let deleteSecContext = symbol("gss_delete_sec_context", as: DeleteSecContext.self)
        let releaseBuffer = symbol("gss_release_buffer", as: ReleaseBuffer.self)
        let releaseName = symbol("gss_release_name", as: ReleaseHandle.self)
        let releaseCred = symbol("gss_release_cred", as: ReleaseHandle.self)
        let displayStatus = symbol("gss_display_status", as: DisplayStatus.self)
        let acquireCred = symbol("gss_acquire_cred", as: AcquireCred.self)
        let withPassword = symbol("gss_acquire_cred_with_password", as: AcquireCredWithPassword.self)
        let setNegMechs = symbol("gss_set_neg_mechs", as: SetNegMechs.self)
        guard let importName, let initSecContext, let deleteSecContext, let releaseBuffer, let releaseName,
            let releaseCred, let displayStatus, let acquireCred, let withPassword, let setNegMechs
        else {
            throw SesameError(
                .negotiateFailed,
                "\(libraryName) lacks \(missing.joined(separator: ", ")): Negotiate needs MIT Kerberos 1.14 or later"
            )
        }
        return GSSAPI(
            importName: importName,
            initSecContext: initSecContext,
            deleteSecContext: deleteSecContext,
            releaseBuffer: releaseBuffer,
            releaseName: releaseName,
            releaseCred: releaseCred,
            displayStatus: displayStatus,
            acquireCred: acquireCred,
            acquireCredWithPassword: withPassword,
            setNegMechs: setNegMechs
        )
    }
}
