/// A challenge-response exchange of one or more legs (Negotiate through GSSAPI, NTLM): each step
/// takes the server's token, if any, and makes the next one to send. One exchange answers one
/// challenge; it is never sent preemptively.
///
/// The task's state machine holds it and asks the driver to run ``step(_:)`` off the task's
/// thread (a step may wait for a KDC), then reads ``token``.
protocol SecurityExchange: AnyObject, Sendable {
    /// The scheme of the header the token goes in: "Negotiate" or "NTLM".
    var scheme: String { get }
    /// The token the last step made (empty when it made none).
    var token: [UInt8] { get }
    /// Whether the exchange is complete on the client's side.
    var isEstablished: Bool { get }
    /// Whether a success must carry the server's final token to prove the server (Negotiate's
    /// mutual authentication); NTLM has no such proof.
    var provesServer: Bool { get }
    /// "Negotiate (HTTP@host)", "NTLM (DOMAIN\\user)" for traces.
    var summary: String { get }
    /// Runs the next step with the server's token (none for the first). `channelBinding` is
    /// RFC 5929's `tls-server-end-point` of the connection the answer goes on (nil without TLS).
    func step(_ input: [UInt8]?, channelBinding: [UInt8]?) throws(SesameError)
}
