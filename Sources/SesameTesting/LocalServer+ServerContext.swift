internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Sesame

/// The server's `SSL_CTX`. Immutable once built.
final class ServerContext: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ configuration: LocalServer.Configuration, identity: TestIssuedCertificate) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TestingError("SSL_CTX_new") }
        pointer = context
        _ = CSesameShims_SSL_CTX_set_min_proto_version(context, Int32(configuration.minimumVersion.rawValue))
        _ = CSesameShims_SSL_CTX_set_max_proto_version(context, Int32(configuration.maximumVersion?.rawValue ?? 0))
        guard SSL_CTX_use_certificate(context, identity.x509.pointer) == 1,
            SSL_CTX_use_PrivateKey(context, identity.key.pointer) == 1
        else { throw TestingError("server certificate") }
        for intermediate in identity.issuerChain {
            _ = CSesameShims_SSL_CTX_add1_chain_cert(context, intermediate.x509.pointer)
        }
        let sessionContext: [UInt8] = Array("sesame-test".utf8)
        SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))
        switch configuration.clientAuthentication {
        case .none:
            break
        case .optional(let trusted), .required(let trusted):
            let store = SSL_CTX_get_cert_store(context)
            for certificate in trusted {
                let x509 = try Self.x509(certificate)
                X509_STORE_add_cert(store, x509.pointer)
                SSL_CTX_add_client_CA(context, x509.pointer)
            }
            var mode = SSL_VERIFY_PEER
            if case .required = configuration.clientAuthentication { mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT }
            SSL_CTX_set_verify(context, mode, nil)
        }
        if let response = configuration.stapledOCSPResponse { installStaple(response) }
        if !configuration.applicationProtocols.isEmpty {
            let box = ALPNPreference(configuration.applicationProtocols)
            alpn = box
            SSL_CTX_set_alpn_select_cb(
                context,
                { _, out, outLength, input, inputLength, arg in
                    guard let arg, let input, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
                    let preference = Unmanaged<ALPNPreference>.fromOpaque(arg).takeUnretainedValue()
                    var cursor = 0
                    while cursor < Int(inputLength) {
                        let length = Int(input[cursor])
                        let name = String(
                            decoding: UnsafeBufferPointer(start: input + cursor + 1, count: length),
                            as: UTF8.self
                        )
                        if preference.names.contains(name) {
                            out.pointee = input + cursor + 1
                            outLength.pointee = UInt8(length)
                            return SSL_TLSEXT_ERR_OK
                        }
                        cursor += 1 + length
                    }
                    return SSL_TLSEXT_ERR_NOACK
                },
                Unmanaged.passUnretained(box).toOpaque()
            )
        }
    }

    private var alpn: ALPNPreference?
    private var staple: StapledBytes?

    private func installStaple(_ response: Data) {
        let box = StapledBytes([UInt8](response))
        staple = box
        _ = CSesameShims_SSL_CTX_set_tlsext_status_cb(
            pointer,
            { ssl, arg in
                let bytes = Unmanaged<StapledBytes>.fromOpaque(arg).takeUnretainedValue().bytes
                // OpenSSL takes ownership and frees the copy with OPENSSL_free.
                guard let copy = CRYPTO_malloc(bytes.count, #fileID, #line) else { return SSL_TLSEXT_ERR_ALERT_FATAL }
                copy.copyMemory(from: bytes, byteCount: bytes.count)
                _ = CSesameShims_SSL_set_tlsext_status_ocsp_resp(
                    ssl,
                    copy.assumingMemoryBound(to: UInt8.self),
                    bytes.count
                )
                return SSL_TLSEXT_ERR_OK
            },
            Unmanaged.passUnretained(box).toOpaque()
        )
    }

    static func x509(_ certificate: Certificate) throws -> OwnedX509 {
        let bytes = [UInt8](certificate.derEncoded)
        let x509: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let x509 else { throw TestingError("certificate") }
        return OwnedX509(takingOwnership: x509)
    }

    deinit { SSL_CTX_free(pointer) }
}

final class StapledBytes: Sendable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

final class ALPNPreference: Sendable {
    let names: [String]
    init(_ names: [String]) { self.names = names }
}
