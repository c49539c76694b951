internal import COpenSSL
import FoundationEssentials

/// RFC 5929's `tls-server-end-point` channel binding: what ties a Negotiate or NTLM answer to the
/// TLS connection it goes on, so that a server requiring it (Windows' Extended Protection) refuses
/// an answer relayed from another connection.
enum ChannelBinding {
    /// "tls-server-end-point:" followed by the hash of the server certificate's DER: the hash of
    /// its signature algorithm, SHA-256 when that is MD5 or SHA-1 or has none (RFC 5929 section 4.1).
    static func tlsServerEndPoint(_ certificate: Certificate) -> [UInt8] {
        var digest: Int32 = 0
        var keyType: Int32 = 0
        var bits: Int32 = 0
        var flags: UInt32 = 0
        let known = X509_get_signature_info(certificate.box.pointer, &digest, &keyType, &bits, &flags) == 1
        let method: OpaquePointer? =
            known && ![NID_undef, NID_md5, NID_sha1, NID_md5_sha1].contains(digest)
            ? EVP_get_digestbyname(OBJ_nid2sn(digest)) : nil
        let der = [UInt8](certificate.derEncoded)
        var hash = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        der.withUnsafeBytes { raw in
            _ = EVP_Digest(raw.baseAddress, raw.count, &hash, &length, method ?? EVP_sha256(), nil)
        }
        return Array("tls-server-end-point:".utf8) + hash.prefix(Int(length))
    }

    /// The channel binding of the TLS connection described by `info`; nil without TLS.
    static func of(_ info: TLSConnectionInfo?) -> [UInt8]? {
        info?.peerChain.first.map(tlsServerEndPoint)
    }

    /// MD5 over a `gss_channel_bindings_struct` that carries `applicationData` only (RFC 4121
    /// section 4.1.1.2's layout): NTLM's MsvAvChannelBindings.
    static func ntlmHash(_ applicationData: [UInt8]) -> [UInt8] {
        var structure = [UInt8](repeating: 0, count: 16)  // address types and lengths: none
        structure.appendLE32(UInt32(applicationData.count))
        var hasher = DigestHasher(.md5)
        hasher.update(structure + applicationData)
        return hasher.finalize()
    }
}
