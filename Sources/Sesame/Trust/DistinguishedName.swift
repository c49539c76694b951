internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

/// An X.500 distinguished name (a certificate's subject or issuer, or one of the CA names a
/// server lists when it asks for a client certificate).
///
/// Equality is by DER encoding. ``description`` is the RFC 2253 string form, e.g.
/// `CN=Example CA,O=Example`.
public struct DistinguishedName: Hashable, Sendable, CustomStringConvertible {
    /// The DER encoding, as Apple's `distinguishedNames` carries it.
    public let derEncoded: Data
    /// The RFC 2253 string form.
    public let description: String

    /// Reads a DER-encoded name.
    /// - Throws: ``SesameError/Code/invalidArgument`` when the bytes are not a name.
    public init(derEncoded: Data) throws {
        let bytes = [UInt8](derEncoded)
        let name: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509_NAME(nil, &cursor, buffer.count)
        }
        guard let name else {
            throw SesameError(.invalidArgument, "the bytes are not a DER-encoded distinguished name")
        }
        defer { X509_NAME_free(name) }
        self.init(borrowing: name)
    }

    /// Copies an `X509_NAME` the caller keeps owning.
    init(borrowing name: OpaquePointer) {
        self.derEncoded = Data(derBytes { i2d_X509_NAME(name, $0) })
        self.description = Self.rfc2253(name)
    }

    /// The value of the first attribute with this short name ("CN", "O", ...), if any.
    public func firstValue(of attribute: String) -> String? {
        for component in Self.components(of: description) {
            let parts = component.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == attribute.lowercased() {
                return String(parts[1])
            }
        }
        return nil
    }

    /// The values of every attribute with this short name, in order.
    public func values(of attribute: String) -> [String] {
        Self.components(of: description).compactMap { component in
            let parts = component.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == attribute.lowercased() else { return nil }
            return String(parts[1])
        }
    }

    /// The common name (CN), if the name has one.
    public var commonName: String? { firstValue(of: "CN") }

    private static func components(of string: String) -> [String] {
        var result: [String] = []
        var current = ""
        var escaped = false
        for character in string {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "," {
                result.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        result.append(current)
        return result
    }

    private static func rfc2253(_ name: OpaquePointer) -> String {
        guard let bio = MemoryBIO() else { return "" }
        X509_NAME_print_ex(bio.pointer, name, 0, CSesameShims_XN_FLAG_RFC2253())
        return String(decoding: bio.contents, as: UTF8.self)
    }
}
