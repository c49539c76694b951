import SesameNetworking
import SesameTesting
import Testing

let pki = try! TestPKI()

/// A server on loopback (`tls` with the test PKI's localhost certificate).
func server(
    tls: Bool = false,
    clientCertificates: Bool = false,
    _ handler: @escaping @Sendable (LocalServer.Request) -> LocalServer.Response
) throws -> LocalServer {
    var configuration = LocalServer.Configuration(identity: tls ? try pki.leaf() : nil)
    if clientCertificates { configuration.clientAuthentication = .required(trusting: [pki.clientCA.certificate]) }
    configuration.handler = handler
    return try LocalServer(configuration)
}

/// DER bytes of a PEM certificate (what an app bundles as `cert.cer`).
func der(_ pem: String) -> Data {
    let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
    return Data(base64Encoded: body)!
}

/// Runs a completion-handler task and waits for its completion.
func load(
    _ session: URLSession,
    _ request: URLRequest
) async -> (data: Data?, response: HTTPURLResponse?, error: Error?) {
    await withCheckedContinuation { continuation in
        session.dataTask(with: request) { data, response, error in
            continuation.resume(returning: (data, response as? HTTPURLResponse, error))
        }.resume()
    }
}

/// Lines of what happened, appended from any thread, to read or to wait for.
typealias Lines = Recorder<String>
