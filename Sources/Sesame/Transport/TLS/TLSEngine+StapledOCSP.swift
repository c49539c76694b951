internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

extension TLSEngine {
    /// Checks the OCSP response the server stapled (see ``StapledOCSPPolicy``). A resumed session
    /// carries no staple; it was stored only after its full handshake passed this check.
    func checkStapledOCSP() throws(SesameError) -> OCSPStatus? {
        guard configuration.stapledOCSP != .ignore, SSL_session_reused(ssl) != 1,
            let leaf = machine.peerChain.first
        else { return nil }
        let peer = "\(serverName):\(port)"
        var bytes: UnsafePointer<UInt8>? = nil
        let length = CSesameShims_SSL_get_tlsext_status_ocsp_resp(ssl, &bytes)
        guard length > 0, let bytes else {
            if configuration.stapledOCSP == .require || leaf.requiresOCSPStaple {
                let why =
                    leaf.requiresOCSPStaple ? "its certificate is marked must-staple" : "the configuration requires one"
                throw SesameError(.serverTrustRejected, "\(peer): the server stapled no OCSP response, and \(why)")
            }
            return nil
        }
        let response = Data(bytes: bytes, count: length)
        let chain = lastEvaluation.flatMap { $0.verifiedChain.isEmpty ? nil : $0.verifiedChain } ?? machine.peerChain
        let store: X509StoreBox
        do {
            store = try configuration.trustRoots.store()
        } catch {
            throw SesameError(.serverTrustRejected, "\(peer): the OCSP staple cannot be checked: \(error)")
        }
        let outcome = OCSPResponseCheck.evaluate(responses: [response], chain: chain, store: store, at: nil)
        guard outcome.failures.isEmpty else {
            let reasons = outcome.failures.map(\.description).joined(separator: "; ")
            throw SesameError(.serverTrustRejected, "\(peer): stapled OCSP response: \(reasons)")
        }
        return outcome.status
    }
}
