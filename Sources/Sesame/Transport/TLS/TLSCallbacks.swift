internal import COpenSSL
internal import CSesameShims

/// Captureless C trampolines: find the engine through `SSL` ex_data, let its state machine
/// decide, and return a C code. They never call back into `SSL_*` for the same handshake.
enum TLSCallbacks {
    /// The `SSL` ex_data slot holding an unretained ``TLSEngine``. The engine owns its `SSL` (and
    /// clears the slot before freeing it), so the pointer is valid whenever OpenSSL can call back.
    static let engineIndex: Int32 = CSesameShims_SSL_get_ex_new_index()

    static func engine(for ssl: OpaquePointer?) -> TLSEngine? {
        guard let ssl, let raw = SSL_get_ex_data(ssl, engineIndex) else { return nil }
        return Unmanaged<TLSEngine>.fromOpaque(raw).takeUnretainedValue()
    }

    /// `SSL_CTX_set_cert_verify_callback`: replaces chain verification with the decision machinery.
    static let verify: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { storeContext, _ in
        guard let storeContext,
            let raw = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx()),
            let engine = engine(for: OpaquePointer(raw))
        else { return 0 }
        switch engine.verifyCallback(chain: peerChain(storeContext)) {
        case .suspend:
            _ = CSesameShims_SSL_set_retry_verify(OpaquePointer(raw))
            return 1  // OpenSSL >= 3.0.2: 1 plus retry_verify suspends the handshake
        case .accept:
            return 1
        case .reject:
            X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
            return 0
        }
    }

    /// `SSL_CTX_set_client_cert_cb`: -1 suspends; 1 with up-referenced objects sends; 0 sends none.
    static let clientCertificate:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<OpaquePointer?>?
        ) -> Int32 = { ssl, x509Out, keyOut in
            guard let engine = engine(for: ssl), let ssl else { return 0 }
            switch engine.clientCertificateCallback(issuers: acceptableIssuers(ssl)) {
            case .suspend:
                return -1
            case .sendNone:
                return 0
            case .send(let identity):
                X509_up_ref(identity.certificate.box.pointer)
                EVP_PKEY_up_ref(identity.privateKey.pointer)
                x509Out?.pointee = identity.certificate.box.pointer
                keyOut?.pointee = identity.privateKey.pointer
                return 1
            }
        }

    /// `SSL_CTX_sess_set_new_cb`: 1 when the engine kept the session reference.
    static let newSession: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
        guard let engine = engine(for: ssl), let session else { return 0 }
        return engine.sessionArrived(session) ? 1 : 0
    }

    private static func peerChain(_ storeContext: OpaquePointer) -> [Certificate] {
        var chain: [Certificate] = []
        if let leaf = X509_STORE_CTX_get0_cert(storeContext) {
            chain.append(Certificate(box: X509Box(borrowing: leaf)))
        }
        if let untrusted = X509_STORE_CTX_get0_untrusted(storeContext) {
            for index in 0..<CSesameShims_sk_X509_num(untrusted) {
                guard let x509 = CSesameShims_sk_X509_value(untrusted, index) else { continue }
                let certificate = Certificate(box: X509Box(borrowing: x509))
                if certificate != chain.first { chain.append(certificate) }
            }
        }
        return chain
    }

    private static func acceptableIssuers(_ ssl: OpaquePointer) -> [DistinguishedName] {
        guard let names = SSL_get_client_CA_list(ssl) else { return [] }
        var result: [DistinguishedName] = []
        for index in 0..<CSesameShims_sk_X509_NAME_num(names) {
            if let name = CSesameShims_sk_X509_NAME_value(names, index) {
                result.append(DistinguishedName(borrowing: name))
            }
        }
        return result
    }
}
