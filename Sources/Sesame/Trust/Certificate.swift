internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

/// An X.509 certificate (the `SecCertificate` analogue).
///
/// A value type over one OpenSSL `X509` that it alone owns. Equal when the DER encodings are equal.
public struct Certificate: Hashable, Sendable, CustomStringConvertible {
    let box: X509Box

    /// The DER encoding.
    public let derEncoded: Data

    init(box: X509Box) {
        self.box = box
        self.derEncoded = Data(derBytes { i2d_X509(box.pointer, $0) })
    }

    /// Parses a DER-encoded certificate.
    /// - Throws: ``SesameError/Code/invalidCertificate`` when the bytes are not exactly one certificate.
    public init(derEncoded: Data) throws {
        try self.init(der: [UInt8](derEncoded), source: "DER data")
    }

    init(der bytes: [UInt8], source: String) throws {
        OpenSSLErrorStack.clear()
        var consumed = 0
        let x509: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let result = d2i_X509(nil, &cursor, buffer.count)
            if let cursor, let base = buffer.baseAddress { consumed = base.distance(to: cursor) }
            return result
        }
        guard let x509 else {
            let stack = OpenSSLErrorStack.drain()
            throw SesameError(.invalidCertificate, "\(source): not a DER certificate (\(stack))")
        }
        guard consumed == bytes.count else {
            X509_free(x509)
            throw SesameError(
                .invalidCertificate,
                "\(source): \(bytes.count - consumed) bytes of trailing data after the certificate"
            )
        }
        self.init(box: X509Box(takingOwnership: x509))
    }

    /// Parses the first certificate of a PEM text.
    /// - Throws: ``SesameError/Code/invalidCertificate`` when the text holds no certificate.
    public init(pemEncoded: String) throws {
        guard let first = try Self.certificates(pem: Array(pemEncoded.utf8), source: "PEM text").first else {
            throw SesameError(.invalidCertificate, "PEM text: no CERTIFICATE block found")
        }
        self = first
    }

    /// Parses every certificate of a PEM text, in order.
    public static func certificates(pemEncoded: String) throws -> [Certificate] {
        let found = try certificates(pem: Array(pemEncoded.utf8), source: "PEM text")
        guard !found.isEmpty else { throw SesameError(.invalidCertificate, "PEM text: no CERTIFICATE block found") }
        return found
    }

    /// Loads every certificate of a file, PEM (one or more blocks) or DER (exactly one).
    /// - Throws: ``SesameError/Code/fileUnreadable`` or ``SesameError/Code/invalidCertificate``,
    ///   naming the file.
    public static func load(contentsOf path: String) throws -> [Certificate] {
        let bytes = try UserFile.read(path, as: .certificates)
        return try certificates(fileBytes: bytes, source: "'\(path)'")
    }

    /// Loads the certificates of every file in a folder (curl's `--capath`, a hashed CA folder):
    /// files that hold no certificate, and entries that are not regular files, are skipped and
    /// named in `skipped`.
    /// - Throws: ``SesameError/Code/fileUnreadable`` when the folder cannot be read,
    ///   ``SesameError/Code/fileTooLarge`` past 10,000 files or their size limit together.
    public static func load(
        contentsOfFolder path: String
    ) throws -> (certificates: [Certificate], skipped: [String]) {
        let folder = try UserFile.readFolder(path, as: .certificates)
        var certificates: [Certificate] = []
        var skipped = folder.skipped
        for file in folder.files {
            do {
                certificates += try Self.certificates(fileBytes: file.bytes, source: "'\(path)/\(file.name)'")
            } catch let error as SesameError {
                skipped.append(error.detail)
            }
        }
        return (certificates, skipped)
    }

    static func certificates(fileBytes bytes: [UInt8], source: String) throws -> [Certificate] {
        if looksLikePEM(bytes) {
            let found = try certificates(pem: bytes, source: source)
            guard !found.isEmpty else {
                throw SesameError(.invalidCertificate, "\(source): PEM file holds no CERTIFICATE block")
            }
            return found
        }
        guard !bytes.isEmpty else { throw SesameError(.invalidCertificate, "\(source): the file is empty") }
        return [try Certificate(der: bytes, source: source)]
    }

    static func certificates(pem bytes: [UInt8], source: String) throws -> [Certificate] {
        guard let bio = MemoryBIO(bytes) else { throw SesameError(.invalidCertificate, "\(source): out of memory") }
        var result: [Certificate] = []
        let blocks = pemBlockLabels(bytes)
        let expected = blocks.filter { $0 == "CERTIFICATE" || $0 == "TRUSTED CERTIFICATE" || $0 == "X509 CERTIFICATE" }
            .count
        OpenSSLErrorStack.clear()
        while let x509 = PEM_read_bio_X509_AUX(bio.pointer, nil, nil, nil) {
            result.append(Certificate(box: X509Box(takingOwnership: x509)))
        }
        let stack = OpenSSLErrorStack.drain()
        if result.count < expected {
            throw SesameError(
                .invalidCertificate,
                "\(source): certificate block \(result.count + 1) of \(expected) is damaged or truncated (\(stack))"
            )
        }
        return result
    }

    /// The PEM encoding (one `CERTIFICATE` block).
    public var pemEncoded: String { pemEncode(derEncoded, label: "CERTIFICATE") }

    /// The subject name.
    public var subject: DistinguishedName { DistinguishedName(borrowing: X509_get_subject_name(box.pointer)) }

    /// The issuer name.
    public var issuer: DistinguishedName { DistinguishedName(borrowing: X509_get_issuer_name(box.pointer)) }

    /// The subject alternative names, in certificate order.
    public var subjectAlternativeNames: [SubjectAlternativeName] {
        guard let raw = X509_get_ext_d2i(box.pointer, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { CSesameShims_GENERAL_NAMES_free(names) }
        var result: [SubjectAlternativeName] = []
        for index in 0..<CSesameShims_sk_GENERAL_NAME_num(names) {
            guard let name = CSesameShims_sk_GENERAL_NAME_value(names, index) else { continue }
            var data: UnsafePointer<UInt8>? = nil
            var length: Int32 = 0
            let type = CSesameShims_GENERAL_NAME_get(name, &data, &length)
            let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: Int(length))) } ?? []
            result.append(SubjectAlternativeName(type: type, bytes: bytes))
        }
        return result
    }

    /// The start of the validity period.
    public var notValidBefore: Date { date(X509_get0_notBefore(box.pointer)) }

    /// The end of the validity period.
    public var notValidAfter: Date { date(X509_get0_notAfter(box.pointer)) }

    /// The serial number, as lower-case hexadecimal without leading zeros.
    public var serialNumber: String {
        guard let serial = X509_get0_serialNumber(box.pointer), let bn = ASN1_INTEGER_to_BN(serial, nil) else {
            return ""
        }
        defer { BN_free(bn) }
        guard let hex = BN_bn2hex(bn) else { return "" }
        defer { CSesameShims_OPENSSL_free(hex) }
        let text = String(cString: hex).lowercased()
        return text.isEmpty ? "0" : text
    }

    /// The subject key identifier extension's value; nil when the certificate has none.
    public var subjectKeyIdentifier: Data? {
        guard let identifier = X509_get0_subject_key_id(box.pointer), let bytes = ASN1_STRING_get0_data(identifier)
        else { return nil }
        return Data(bytes: bytes, count: Int(ASN1_STRING_length(identifier)))
    }

    /// SHA-256 of the DER encoding (what certificate pinning compares).
    public var sha256Fingerprint: Data { Data(sha256Digest([UInt8](derEncoded))) }

    /// The subject public key.
    public var publicKey: PublicKey {
        let spki = derBytes { i2d_X509_PUBKEY(X509_get_X509_PUBKEY(box.pointer), $0) }
        return PublicKey(spkiDER: Data(spki), description: Self.keyDescription(box.pointer))
    }

    /// True when the basic-constraints extension marks this certificate as a CA.
    public var isCertificateAuthority: Bool { X509_check_ca(box.pointer) != 0 }

    /// True when subject and issuer are the same name.
    public var isSelfIssued: Bool {
        X509_NAME_cmp(X509_get_subject_name(box.pointer), X509_get_issuer_name(box.pointer)) == 0
    }

    /// True when the certificate carries certificatePolicies or policyMappings.
    var hasPolicyExtensions: Bool {
        X509_get_ext_by_NID(box.pointer, NID_certificate_policies, -1) >= 0
            || X509_get_ext_by_NID(box.pointer, NID_policy_mappings, -1) >= 0
    }

    /// True when the certificate carries policyConstraints but no certificatePolicies.
    var hasPolicyConstraintsWithoutPolicies: Bool {
        X509_get_ext_by_NID(box.pointer, NID_policy_constraints, -1) >= 0
            && X509_get_ext_by_NID(box.pointer, NID_certificate_policies, -1) < 0
    }

    public var description: String {
        "Certificate(subject: \(subject), issuer: \(issuer), serial: \(serialNumber))"
    }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.derEncoded == rhs.derEncoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(derEncoded) }

    private func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        var tm = tm()
        guard let time, ASN1_TIME_to_tm(time, &tm) == 1 else { return .distantPast }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&tm)))
    }

    private static func keyDescription(_ x509: OpaquePointer) -> String {
        guard let key = X509_get0_pubkey(x509) else { return "unknown key" }
        return PublicKey.description(of: key)
    }
}

/// One entry of a certificate's subject alternative name extension.
public enum SubjectAlternativeName: Hashable, Sendable, CustomStringConvertible {
    /// A DNS name (`dNSName`), as written in the certificate.
    case dnsName(String)
    /// An IP address (`iPAddress`): 4 bytes for IPv4, 16 for IPv6.
    case ipAddress([UInt8])
    /// An email address (`rfc822Name`).
    case email(String)
    /// A URI (`uniformResourceIdentifier`).
    case uri(String)
    /// Another kind of name, by its context tag in `GeneralName`.
    case other(type: Int)

    init(type: Int32, bytes: [UInt8]) {
        switch type {
        case GEN_DNS: self = .dnsName(String(decoding: bytes, as: UTF8.self))
        case GEN_IPADD: self = .ipAddress(bytes)
        case GEN_EMAIL: self = .email(String(decoding: bytes, as: UTF8.self))
        case GEN_URI: self = .uri(String(decoding: bytes, as: UTF8.self))
        default: self = .other(type: Int(type))
        }
    }

    public var description: String {
        switch self {
        case .dnsName(let name): return "DNS:\(name)"
        case .ipAddress(let bytes): return "IP:\(IPAddressText.format(bytes))"
        case .email(let email): return "email:\(email)"
        case .uri(let uri): return "URI:\(uri)"
        case .other(let type): return "other(\(type))"
        }
    }
}

/// Text forms of raw IPv4 / IPv6 addresses, and the host spellings that go with them.
enum IPAddressText {
    /// `[::1]` (as written in URLs) becomes `::1`; anything else is unchanged.
    static func unbracketed(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The DNS name to send as SNI and to match against certificates: without the root's trailing
    /// dot ("example.com." is "example.com"); nil for an IP literal.
    static func dnsName(_ host: String) -> String? {
        guard parse(host) == nil else { return nil }
        return host.hasSuffix(".") ? String(host.dropLast()) : host
    }

    static func format(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        if bytes.count == 16 {
            var buffer = [CChar](repeating: 0, count: 64)
            let ok = bytes.withUnsafeBytes {
                inet_ntop(AF_INET6, $0.baseAddress, &buffer, socklen_t(buffer.count)) != nil
            }
            if ok { return stringFromCBuffer(buffer) }
        }
        return bytes.hexString(separator: ":")
    }

    /// The address bytes when `text` is an IPv4 or IPv6 literal (brackets allowed), else nil.
    static func parse(_ text: String) -> [UInt8]? {
        let host = unbracketed(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}

func looksLikePEM(_ bytes: [UInt8]) -> Bool {
    let prefix = String(decoding: bytes.prefix(4096), as: UTF8.self)
    return prefix.contains("-----BEGIN ")
}

/// The labels of every `-----BEGIN X-----` line, in order (one pass over the bytes).
func pemBlockLabels(_ bytes: [UInt8]) -> [String] {
    let begin = Array("-----BEGIN ".utf8)
    let dashes = Array("-----".utf8)
    var labels: [String] = []
    var index = 0
    while let start = firstIndex(of: begin, in: bytes, from: index) {
        let labelStart = start + begin.count
        guard let end = firstIndex(of: dashes, in: bytes, from: labelStart) else { break }
        labels.append(String(decoding: bytes[labelStart..<end], as: UTF8.self))
        index = end + dashes.count
    }
    return labels
}

/// Where `pattern` (which starts with a byte that does not repeat in it) first occurs in `bytes`
/// at or after `start`: linear in the bytes looked at.
private func firstIndex(of pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
    var index = start
    let last = bytes.count - pattern.count
    while index <= last {
        guard let first = bytes[index...last].firstIndex(of: pattern[0]) else { return nil }
        if bytes[first..<(first + pattern.count)].elementsEqual(pattern) { return first }
        index = first + 1
    }
    return nil
}

func pemEncode(_ der: Data, label: String) -> String {
    let base64 = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
    return "-----BEGIN \(label)-----\n\(base64)\n-----END \(label)-----\n"
}
