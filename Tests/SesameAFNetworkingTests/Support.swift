import SesameAFNetworking
import SesameTesting
import Testing

let pki = try! TestPKI()

/// Every AFNetworking test, one at a time: several start nginx or a child process, and run side
/// by side with the rest of the suite under a sanitizer on two processors they starved each other
/// past the timeouts they test with.
@Suite(.serialized) enum AFNetworkingTests {}

/// A server on loopback, with `identity` for https.
func server(
    identity: TestIssuedCertificate? = nil,
    _ handler: @escaping @Sendable (LocalServer.Request) -> LocalServer.Response
) throws -> LocalServer {
    var configuration = LocalServer.Configuration(identity: identity)
    configuration.handler = handler
    return try LocalServer(configuration)
}

/// DER bytes of the first certificate in PEM text (what an app bundles as `server.cer`).
func der(_ pem: String) -> Data {
    let first = pem.components(separatedBy: "-----END CERTIFICATE-----")[0]
    let body = first.split(separator: "\n").filter { !$0.hasPrefix("-----") && !$0.isEmpty }.joined()
    return Data(base64Encoded: body)!
}

/// How an AFHTTPSessionManager call ended.
enum Outcome {
    case success(URLSessionDataTask, Any?)
    case failure(URLSessionDataTask?, Error)

    var object: Any? {
        if case .success(_, let object) = self { return object }
        return nil
    }
    var error: NSError? {
        if case .failure(_, let error) = self { return error as NSError }
        return nil
    }
}

/// Runs one manager call and waits for its success or failure block.
func outcome(
    _ call: (@escaping (URLSessionDataTask, Any?) -> Void, @escaping (URLSessionDataTask?, Error) -> Void) -> Void
) async -> Outcome {
    await withCheckedContinuation { continuation in
        call({ continuation.resume(returning: .success($0, $1)) }, { continuation.resume(returning: .failure($0, $1)) })
    }
}

/// The body of a request as text.
func text(_ request: LocalServer.Request) -> String { String(decoding: request.body, as: UTF8.self) }
