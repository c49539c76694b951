import SesameNetworking
import SesameTesting
import Testing

// App code as it is written for Apple's platforms in the Swift 6 language mode: Sendable
// delegates, `@MainActor` view models, `@Sendable` completion handlers, async delegate methods;
// only `import SesameNetworking` for the URL loading system. Compiling this target is half of
// the check: every type crosses isolation as it does with Apple's SDK.

private let pki = try! TestPKI()

private func server(
    certificate: TestIssuedCertificate? = nil,
    _ handler: @escaping @Sendable (LocalServer.Request) -> LocalServer.Response
) throws -> LocalServer {
    var configuration = LocalServer.Configuration(identity: certificate)
    configuration.handler = handler
    return try LocalServer(configuration)
}

/// A session delegate that pins the server's certificate, as apps write it under Swift 6: a
/// final Sendable class with only immutable state, and the async form of the challenge method.
final class PinningDelegate: NSObject, URLSessionDelegate, Sendable {
    let pinnedCertificate: Data

    init(pinnedCertificate: Data) { self.pinnedCertificate = pinnedCertificate }

    func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
            let trust = challenge.protectionSpace.serverTrust,
            let chain = SecTrustCopyCertificateChain(trust) as? [SecCertificate],
            let leaf = chain.first
        else { return (.performDefaultHandling, nil) }
        let presented = SecCertificateCopyData(leaf) as Data
        return presented == pinnedCertificate
            ? (.useCredential, URLCredential(trust: trust)) : (.cancelAuthenticationChallenge, nil)
    }
}

/// A task delegate that signs in, holding its attempts behind a lock (Sendable by hand, as apps
/// do with `@unchecked Sendable` and a lock).
final class SignIn: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var attempts = 0

    var attemptCount: Int { lock.withLock { attempts } }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic else {
            return (.performDefaultHandling, nil)
        }
        lock.withLock { attempts += 1 }
        guard challenge.previousFailureCount == 0 else { return (.cancelAuthenticationChallenge, nil) }
        return (.useCredential, URLCredential(user: "ada", password: "s3cret", persistence: .forSession))
    }
}

/// A view model on the main actor that loads through the shared session.
@MainActor final class ProfileModel {
    private(set) var greeting = ""
    private let session: URLSession

    init(session: URLSession) { self.session = session }

    func load(from url: URL) async throws {
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let (data, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
        greeting = String(decoding: data, as: UTF8.self)
    }
}

@Suite struct Swift6AppCodeTests {
    @Test func aSendablePinningDelegateAcceptsItsPinAndRefusesAnother() async throws {
        let leaf = try pki.leaf()
        let origin = try server(certificate: leaf) { _ in .text("pinned") }
        defer { origin.shutdown() }
        let pin = leaf.certificate.derEncoded
        let url = URL(string: origin.baseURL + "/")!

        let pinned = URLSession(
            configuration: .ephemeral,
            delegate: PinningDelegate(pinnedCertificate: pin),
            delegateQueue: nil
        )
        let (data, _) = try await pinned.data(from: url)
        #expect(String(decoding: data, as: UTF8.self) == "pinned")

        let other = URLSession(
            configuration: .ephemeral,
            delegate: PinningDelegate(pinnedCertificate: pki.root.certificate.derEncoded),
            delegateQueue: nil
        )
        await #expect(throws: URLError.self) { _ = try await other.data(from: url) }
    }

    @Test func aMainActorModelLoadsWithATaskDelegateSigningIn() async throws {
        let gate = BasicAuthGate(realm: "swift6", users: ["ada": "s3cret"])
        let origin = try server { request in gate.check(request) ?? .text("hello ada") }
        defer { origin.shutdown() }
        let signIn = SignIn()
        let session = URLSession(configuration: .ephemeral, delegate: signIn, delegateQueue: nil)
        let model = await ProfileModel(session: session)
        try await model.load(from: URL(string: origin.baseURL + "/me")!)
        #expect(await model.greeting == "hello ada")
        #expect(signIn.attemptCount == 1)
    }

    @Test func completionHandlersAreSendableAndCredentialsCrossTasks() async throws {
        let gate = BasicAuthGate(realm: "swift6", users: ["ada": "s3cret"])
        let origin = try server { request in gate.check(request) ?? .text("ok") }
        defer { origin.shutdown() }
        let storage = URLCredentialStorage()
        let space = URLProtectionSpace(
            host: "localhost",
            port: origin.port,
            protocol: NSURLProtectionSpaceHTTP,
            realm: "swift6",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        let credential = URLCredential(user: "ada", password: "s3cret", persistence: .forSession)
        // Set from another task, as apps do after a sign-in screen.
        await Task.detached { storage.setDefaultCredential(credential, for: space) }.value

        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCredentialStorage = storage
        let session = URLSession(configuration: configuration)
        let status: Int? = await withCheckedContinuation { continuation in
            session.dataTask(with: URL(string: origin.baseURL + "/")!) { _, response, _ in
                continuation.resume(returning: (response as? HTTPURLResponse)?.statusCode)
            }.resume()
        }
        #expect(status == 200)
        // Finished tasks are no longer the session's.
        #expect(await session.allTasks.isEmpty)
        let (data, uploads, downloads) = await session.tasks
        #expect(data.isEmpty && uploads.isEmpty && downloads.isEmpty)
    }

    @Test func storageNotificationsReachASendableObserver() async throws {
        let storage = URLCredentialStorage()
        let seen = Counter()
        let observer = NotificationCenter.default.addObserver(
            forName: .NSURLCredentialStorageChanged,
            object: storage,
            queue: nil
        ) { _ in seen.increment() }
        defer { NotificationCenter.default.removeObserver(observer) }
        let space = URLProtectionSpace(
            host: "api.example",
            port: 443,
            protocol: NSURLProtectionSpaceHTTPS,
            realm: nil,
            authenticationMethod: NSURLAuthenticationMethodDefault
        )
        storage.set(URLCredential(user: "ada", password: "pw", persistence: .forSession), for: space)
        #expect(seen.value == 1)
    }
}

/// A count observers may bump from any thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
