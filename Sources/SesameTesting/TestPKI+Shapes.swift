internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Sesame

extension TestPKI {
    /// A certificate built field by field, to test one rule of certificate validation: exactly
    /// the extensions given (OpenSSL's configuration syntax, `critical,` first for a critical one,
    /// or raw DER), the serial, version and time encodings chosen.
    public struct Shape: Sendable {
        /// RFC 2253 order (most specific first); empty for an empty subject.
        public var subject: String
        /// The key algorithm of the certificate's key pair.
        public var key: KeyType = .ecdsaP256
        /// Reuses this certificate's key pair (a cross-signed or re-issued CA) instead of a new one.
        public var keyOf: TestIssuedCertificate? = nil
        /// Extensions as OpenSSL's configuration writes them: `("basicConstraints", "critical,CA:TRUE")`.
        public var extensions: [(name: String, value: String)] = []
        /// Extensions as DER: the OID in dotted form, criticality and the extnValue contents.
        public var rawExtensions: [(oid: String, critical: Bool, value: [UInt8])] = []
        /// Adds a subject key identifier (the key's hash) after the extensions.
        public var subjectKeyIdentifier = true
        /// Adds an authority key identifier (the issuer's key identifier) after the extensions.
        public var authorityKeyIdentifier = true
        /// The serial's magnitude, big-endian (nil: 16 random bytes, top bit clear).
        public var serial: [UInt8]? = nil
        /// Writes the serial as a negative number (which RFC 5280 forbids).
        public var negativeSerial = false
        /// 1, 2 or 3.
        public var version = 3
        /// The start of the validity period.
        public var notBefore: Date
        /// The end of the validity period.
        public var notAfter: Date
        /// Writes both times as GeneralizedTime, whatever the year.
        public var generalizedTime = false
        /// The hash the issuer signs with.
        public var signatureDigest: SignatureDigest = .sha256

        /// A version 3 certificate for `subject` valid from `notBefore` to `notAfter`, with a fresh
        /// ECDSA P-256 key, signed with SHA-256, and no extensions but the key identifiers.
        public init(subject: String, notBefore: Date, notAfter: Date) {
            self.subject = subject
            self.notBefore = notBefore
            self.notAfter = notAfter
        }
    }

    /// The hash a certificate's signature is made with.
    public enum SignatureDigest: Sendable {
        /// SHA-1, which the web PKI no longer accepts.
        case sha1
        /// SHA-256.
        case sha256
        /// SHA-384.
        case sha384
        /// SHA-512.
        case sha512
    }

    /// A root CA's shape: cA=TRUE and keyCertSign, both critical.
    public func caShape(_ subject: String) -> Shape {
        var shape = Shape(subject: subject, notBefore: now - 86_400, notAfter: now + 3650 * 86_400)
        shape.extensions = [("basicConstraints", "critical,CA:TRUE"), ("keyUsage", "critical,keyCertSign,cRLSign")]
        return shape
    }

    /// A server leaf's shape for `localhost`: not a CA, digitalSignature, serverAuth, the SAN.
    public func leafShape(_ subject: String = "CN=localhost,O=Sesame Test") -> Shape {
        var shape = Shape(subject: subject, notBefore: now - 86_400, notAfter: now + 90 * 86_400)
        shape.extensions = [
            ("basicConstraints", "critical,CA:FALSE"), ("keyUsage", "critical,digitalSignature"),
            ("extendedKeyUsage", "serverAuth"), ("subjectAltName", "DNS:localhost,IP:127.0.0.1"),
        ]
        return shape
    }

    /// A certificate of `shape` issued by `issuer` (self-signed when nil).
    public func issue(_ shape: Shape, issuer: TestIssuedCertificate?) throws -> TestIssuedCertificate {
        try Self.issueShape(shape, issuer: issuer, isRoot: issuer == nil)
    }

    static func issueShape(_ shape: Shape, issuer: TestIssuedCertificate?, isRoot: Bool) throws -> TestIssuedCertificate
    {
        let key = try shape.keyOf?.key ?? generateKey(shape.key)
        guard let x509 = X509_new() else { throw TestingError("X509_new") }
        let owned = OwnedX509(takingOwnership: x509)
        X509_set_version(x509, Int(shape.version - 1))
        var serial = shape.serial ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
        if shape.serial == nil { serial[0] &= 0x7F }
        if let bn = BN_bin2bn(serial, Int32(serial.count), nil) {
            BN_set_negative(bn, shape.negativeSerial ? 1 : 0)
            BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x509))
            BN_free(bn)
        }
        for (time, date) in [(X509_getm_notBefore(x509), shape.notBefore), (X509_getm_notAfter(x509), shape.notAfter)] {
            if shape.generalizedTime {
                ASN1_GENERALIZEDTIME_set(time, time_t(date.timeIntervalSince1970))
            } else {
                ASN1_TIME_set(time, time_t(date.timeIntervalSince1970))
            }
        }
        X509_set_pubkey(x509, key.pointer)
        guard let name = X509_NAME_new() else { throw TestingError("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        for component in shape.subject.split(separator: ",").reversed() {
            let parts = component.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            guard X509_NAME_add_entry_by_txt(name, parts[0], MBSTRING_UTF8, parts[1], -1, -1, 0) == 1 else {
                throw TestingError("subject component \(component)")
            }
        }
        X509_set_subject_name(x509, name)
        X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.x509.pointer) } ?? name)

        var extensions = shape.extensions
        if shape.subjectKeyIdentifier { extensions.append(("subjectKeyIdentifier", "hash")) }
        if shape.authorityKeyIdentifier { extensions.append(("authorityKeyIdentifier", "keyid:always")) }
        let context = CSesameShims_X509V3_CTX_new()
        defer { CSesameShims_X509V3_CTX_free(context) }
        CSesameShims_X509V3_set_ctx(context, issuer?.x509.pointer ?? x509, x509)
        for (extensionName, value) in extensions {
            guard let ext = X509V3_EXT_conf(nil, context, extensionName, value) else {
                throw TestingError("extension \(extensionName)=\(value)")
            }
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        for raw in shape.rawExtensions {
            guard let object = OBJ_txt2obj(raw.oid, 1) else { throw TestingError("OID \(raw.oid)") }
            defer { ASN1_OBJECT_free(object) }
            guard let octets = ASN1_OCTET_STRING_new() else { throw TestingError("octet string") }
            defer { ASN1_OCTET_STRING_free(octets) }
            ASN1_OCTET_STRING_set(octets, raw.value, Int32(raw.value.count))
            guard let ext = X509_EXTENSION_create_by_OBJ(nil, object, raw.critical ? 1 : 0, octets) else {
                throw TestingError("extension \(raw.oid)")
            }
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        let signer = issuer?.key ?? key
        let digest: OpaquePointer?
        switch shape.signatureDigest {
        case .sha1: digest = EVP_sha1()
        case .sha256: digest = EVP_sha256()
        case .sha384: digest = EVP_sha384()
        case .sha512: digest = EVP_sha512()
        }
        guard X509_sign(x509, signer.pointer, digest) > 0 else { throw TestingError("X509_sign") }
        let intermediates = issuer.map { ([$0] + $0.issuerChain).filter { !$0.isRoot } } ?? []
        return try TestIssuedCertificate(
            x509: owned,
            key: key,
            issuer: issuer,
            issuerChain: intermediates,
            isRoot: isRoot
        )
    }
}

extension TestPKI {
    /// A CRL signed by `issuer` listing `revoked` serials (magnitudes, big-endian), with the fields
    /// RFC 5280 §5 requires unless told to leave one out.
    /// - Parameters:
    ///   - issuer: the CA whose name the CRL carries.
    ///   - signer: the key that signs it, when not the issuer's (a separate CRL-signing
    ///     certificate of the same CA, RFC 5280 §6.3.3 (f)).
    ///   - revoked: the revoked serial numbers.
    ///   - nextUpdate: whether the CRL has a nextUpdate.
    ///   - crlNumber: whether the CRL has a CRL number.
    ///   - number: the CRL number.
    ///   - deltaOf: makes it a delta CRL (RFC 5280 §5.2.4) of the base CRL with this number.
    ///   - announcesDeltas: adds a freshest CRL extension (§5.2.6): delta CRLs of this base exist.
    ///   - authorityKeyIdentifier: whether the CRL has an authority key identifier.
    ///   - criticalCRLNumber: marks the CRL number critical.
    public func crl(
        issuer: TestIssuedCertificate,
        signer: TestIssuedCertificate? = nil,
        revoked: [[UInt8]] = [],
        nextUpdate: Bool = true,
        crlNumber: Bool = true,
        number: Int = 1337,
        deltaOf: Int? = nil,
        announcesDeltas: Bool = false,
        authorityKeyIdentifier: Bool = true,
        criticalCRLNumber: Bool = false
    ) throws -> Data {
        let signer = signer ?? issuer
        guard let crl = X509_CRL_new() else { throw TestingError("X509_CRL_new") }
        defer { X509_CRL_free(crl) }
        X509_CRL_set_version(crl, 1)
        X509_CRL_set_issuer_name(crl, X509_get_subject_name(issuer.x509.pointer))
        let last = ASN1_TIME_set(nil, time_t((now - 3600).timeIntervalSince1970))
        defer { ASN1_TIME_free(last) }
        X509_CRL_set1_lastUpdate(crl, last)
        if nextUpdate {
            let next = ASN1_TIME_set(nil, time_t((now + 7 * 86_400).timeIntervalSince1970))
            defer { ASN1_TIME_free(next) }
            X509_CRL_set1_nextUpdate(crl, next)
        }
        for serial in revoked {
            guard let entry = X509_REVOKED_new() else { throw TestingError("X509_REVOKED_new") }
            let bn = BN_bin2bn(serial, Int32(serial.count), nil)
            let integer = BN_to_ASN1_INTEGER(bn, nil)
            X509_REVOKED_set_serialNumber(entry, integer)
            X509_REVOKED_set_revocationDate(entry, last)
            ASN1_INTEGER_free(integer)
            BN_free(bn)
            X509_CRL_add0_revoked(crl, entry)
        }
        let context = CSesameShims_X509V3_CTX_new()
        defer { CSesameShims_X509V3_CTX_free(context) }
        CSesameShims_X509V3_set_ctx(context, signer.x509.pointer, signer.x509.pointer)
        if authorityKeyIdentifier {
            guard let ext = X509V3_EXT_conf(nil, context, "authorityKeyIdentifier", "keyid:always") else {
                throw TestingError("CRL authority key identifier")
            }
            X509_CRL_add_ext(crl, ext, -1)
            X509_EXTENSION_free(ext)
        }
        if crlNumber {
            let integer = ASN1_INTEGER_new()
            defer { ASN1_INTEGER_free(integer) }
            ASN1_INTEGER_set(integer, number)
            guard
                X509_CRL_add1_ext_i2d(
                    crl,
                    NID_crl_number,
                    UnsafeMutableRawPointer(integer),
                    criticalCRLNumber ? 1 : 0,
                    0
                ) == 1
            else { throw TestingError("CRL number") }
        }
        if announcesDeltas {
            guard let ext = X509V3_EXT_conf(nil, context, "freshestCRL", "URI:http://crl.sesame.test/delta.crl") else {
                throw TestingError("freshest CRL")
            }
            X509_CRL_add_ext(crl, ext, -1)
            X509_EXTENSION_free(ext)
        }
        if let deltaOf {
            let base = ASN1_INTEGER_new()
            defer { ASN1_INTEGER_free(base) }
            ASN1_INTEGER_set(base, deltaOf)
            guard X509_CRL_add1_ext_i2d(crl, NID_delta_crl, UnsafeMutableRawPointer(base), 1, 0) == 1 else {
                throw TestingError("delta CRL indicator")
            }
        }
        X509_CRL_sort(crl)
        guard X509_CRL_sign(crl, signer.key.pointer, EVP_sha256()) > 0 else { throw TestingError("X509_CRL_sign") }
        var der: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509_CRL(crl, &der)
        guard length > 0, let der else { throw TestingError("i2d_X509_CRL") }
        defer { CSesameShims_OPENSSL_free(der) }
        return Data(bytes: der, count: Int(length))
    }
}

extension TestPKI {
    /// `certificate` with a subjectUniqueID (RFC 5280 §4.1.2.8) written into its
    /// TBSCertificate before the extensions, signed again by `issuer`: OpenSSL has no API that
    /// sets one, so the DER is edited.
    public func addingSubjectUniqueID(
        to certificate: TestIssuedCertificate,
        issuer: TestIssuedCertificate
    ) throws
        -> Certificate
    {
        let der = [UInt8](certificate.certificate.derEncoded)
        // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }
        let outer = try DERReader.element(der, at: 0)
        let tbs = try DERReader.element(der, at: outer.contentStart)
        let algorithm = try DERReader.element(der, at: tbs.end)
        var fields: [[UInt8]] = []
        var cursor = tbs.contentStart
        while cursor < tbs.end {
            let field = try DERReader.element(der, at: cursor)
            fields.append(Array(der[cursor..<field.end]))
            cursor = field.end
        }
        // Before [3] extensions, the last field.
        let uniqueID: [UInt8] = [0x82, 0x02, 0x00, 0x5A]
        if fields.last?.first == 0xA3 { fields.insert(uniqueID, at: fields.count - 1) } else { fields.append(uniqueID) }
        let newTBS = DERReader.wrap(0x30, fields.flatMap { $0 })
        guard let context = EVP_MD_CTX_new() else { throw TestingError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, issuer.key.pointer) == 1 else {
            throw TestingError("EVP_DigestSignInit")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, newTBS, newTBS.count) == 1 else {
            throw TestingError("signature size")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, newTBS, newTBS.count) == 1 else {
            throw TestingError("sign")
        }
        let bits = DERReader.wrap(0x03, [0x00] + signature.prefix(length))
        let rebuilt = DERReader.wrap(0x30, newTBS + Array(der[tbs.end..<algorithm.end]) + bits)
        return try Certificate(derEncoded: Data(rebuilt))
    }
}

/// Just enough DER to edit a certificate: element boundaries and re-wrapping.
enum DERReader {
    struct Element {
        let contentStart: Int
        let end: Int
    }

    static func element(_ bytes: [UInt8], at start: Int) throws -> Element {
        guard start + 1 < bytes.count else { throw TestingError("DER cut short") }
        var index = start + 1
        var length = Int(bytes[index])
        index += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count <= 4, index + count <= bytes.count else { throw TestingError("DER length") }
            length = 0
            for byte in bytes[index..<(index + count)] { length = length << 8 | Int(byte) }
            index += count
        }
        guard index + length <= bytes.count else { throw TestingError("DER element overruns") }
        return Element(contentStart: index, end: index + length)
    }

    static func wrap(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var value = content.count
            var digits: [UInt8] = []
            while value > 0 {
                digits.insert(UInt8(value & 0xFF), at: 0)
                value >>= 8
            }
            length = [0x80 | UInt8(digits.count)] + digits
        }
        return [tag] + length + content
    }
}
