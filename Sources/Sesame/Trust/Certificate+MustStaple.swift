internal import COpenSSL

extension Certificate {
    /// True when the certificate carries the TLS Feature extension (RFC 7633) with
    /// `status_request` (5) or `status_request_v2` (17): "must staple". A server presenting it
    /// must staple an OCSP response, and a connection without one fails.
    public var requiresOCSPStaple: Bool {
        let index = X509_get_ext_by_NID(box.pointer, NID_tlsfeature, -1)
        guard index >= 0, let extensionData = X509_get_ext(box.pointer, index),
            let octets = X509_EXTENSION_get_data(extensionData),
            let bytes = ASN1_STRING_get0_data(octets)
        else { return false }
        let der = Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(octets))))
        return Self.tlsFeatures(der).contains { $0 == 5 || $0 == 17 }
    }

    /// The integers of `Features ::= SEQUENCE OF INTEGER` (short-form lengths only: the
    /// extension is a handful of bytes); empty when the encoding is anything else.
    static func tlsFeatures(_ der: [UInt8]) -> [Int] {
        guard der.count >= 2, der[0] == 0x30, Int(der[1]) == der.count - 2, der[1] < 0x80 else { return [] }
        var features: [Int] = []
        var cursor = 2
        while cursor + 2 <= der.count {
            let length = Int(der[cursor + 1])
            guard der[cursor] == 0x02, (1...2).contains(length), cursor + 2 + length <= der.count else { return [] }
            features.append(der[(cursor + 2)..<(cursor + 2 + length)].reduce(0) { $0 << 8 | Int($1) })
            cursor += 2 + length
        }
        return cursor == der.count ? features : []
    }
}
