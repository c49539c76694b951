internal import COpenSSL
import FoundationEssentials
import Glibc

/// Where a certificate sits in a candidate path, and the path around it.
struct PathCertificate {
    let certificate: Certificate
    /// 0 for the leaf.
    let depth: Int
    /// The whole path, leaf first, the anchor last.
    let path: [Certificate]
    /// The leaf's subject alternative names, decoded once for the path.
    let leafNames: [SubjectAlternativeName]

    var x509: OpaquePointer { certificate.box.pointer }
    var isLeaf: Bool { depth == 0 }
    /// The trust anchor (the last certificate of a path of two or more). A path of one is a leaf
    /// that is its own anchor, and is checked as a leaf.
    var isAnchor: Bool { depth == path.count - 1 && path.count > 1 }
    /// A CA certificate between the leaf and the anchor.
    var isIntermediate: Bool { depth > 0 && !isAnchor }
    /// Whether basicConstraints says cA=TRUE.
    var isCA: Bool { X509_get_extension_flags(x509) & UInt32(EXFLAG_CA) != 0 }

    /// The certificate's extensions by NID, with their criticality (read once per certificate).
    let extensions: [Int32: Bool]

    init(certificate: Certificate, depth: Int, path: [Certificate], leafNames: [SubjectAlternativeName]) {
        self.certificate = certificate
        self.depth = depth
        self.path = path
        self.leafNames = leafNames
        var extensions: [Int32: Bool] = [:]
        let x509 = certificate.box.pointer
        for index in 0..<X509_get_ext_count(x509) {
            guard let ext = X509_get_ext(x509, index) else { continue }
            let nid = OBJ_obj2nid(X509_EXTENSION_get_object(ext))
            if nid != NID_undef {
                extensions[nid] = (extensions[nid] ?? false) || X509_EXTENSION_get_critical(ext) == 1
            }
        }
        self.extensions = extensions
    }

    /// extendedKeyUsage's purposes, decoded.
    var extendedKeyUsage: DecodedExtension<[String]> { CertificateExtensions.extendedKeyUsage(x509) }

    /// certificatePolicies, decoded.
    var certificatePolicies: DecodedExtension<[PolicyInformation]> { CertificateExtensions.certificatePolicies(x509) }

    /// The extension with `nid`: whether it is present and whether it is critical.
    func `extension`(_ nid: Int32) -> (present: Bool, critical: Bool) {
        guard let critical = extensions[nid] else { return (false, false) }
        return (true, critical)
    }
}

/// One rule of the server profile, checked on each certificate of a candidate path. Each rule
/// names the sections it implements; where RFC 5280 and the CA/Browser Forum's Baseline
/// Requirements disagree, the server profile follows the Forum and the rule says so.
protocol CertificatePolicy: Sendable {
    /// The sections the rule implements.
    var source: String { get }
    /// What `certificate` violates, one sentence each; empty when it conforms.
    func problems(of certificate: PathCertificate, host: String?) -> [String]
}

/// The server profile: the rules OpenSSL 3.0's verification does not enforce, run on the path it
/// built (or each path the path builder tries).
enum ServerProfile {
    static let policies: [any CertificatePolicy] = [
        VersionPolicy(),
        SerialNumberPolicy(),
        ValidityEncodingPolicy(),
        SubjectNamePolicy(),
        PublicKeyPolicy(),
        SignatureAlgorithmPolicy(),
        KeyIdentifierPolicy(),
        BasicConstraintsPolicy(),
        KeyUsagePolicy(),
        ExtendedKeyUsagePolicy(),
        SubjectAlternativeNamePolicy(),
        CommonNamePolicy(),
        NameConstraintsPolicy(),
        CertificatePoliciesPolicy(),
        InformationAccessPolicy(),
    ]

    /// Every violation in `chain` (leaf first, the anchor last) for a connection to `host`.
    static func violations(in chain: [Certificate], host: String?) -> [TrustFailureReason] {
        var failures: [TrustFailureReason] = []
        let leafNames = chain.first?.subjectAlternativeNames ?? []
        for (depth, certificate) in chain.enumerated() {
            let position = PathCertificate(certificate: certificate, depth: depth, path: chain, leafNames: leafNames)
            for policy in policies {
                for problem in policy.problems(of: position, host: host) {
                    failures.append(
                        TrustFailureReason(
                            kind: .policyViolation,
                            depth: depth,
                            subject: "\(certificate.subject)",
                            openSSLCode: 0,
                            message: problem
                        )
                    )
                }
            }
        }
        return failures
    }
}
