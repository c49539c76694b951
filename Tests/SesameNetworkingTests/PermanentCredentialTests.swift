import SesameNetworking
import SesameTesting
import Testing

/// Seed 001's point: a credential stored permanently for a protection space is used by a later
/// process with no delegate at all (Apple keeps it in the keychain; Sesame in its store file).
@Suite(.serialized) struct PermanentCredentialTests {
    @Test func aPreSeededPermanentDefaultIsUsedByAnotherProcessWithNoDelegate() async throws {
        let gate = BasicAuthGate(realm: "kept", users: ["ada": "s3cret"])
        let origin = try server { request in gate.check(request) ?? .text("remembered") }
        defer { origin.shutdown() }
        let home = try ScratchFolder.make("permanent-home").path
        let port = origin.port

        // This process stores it, as an app's settings screen would.
        await #expect(processExitsWith: .success) { [home = home as String, port = port as Int] in
            setenv("XDG_DATA_HOME", home, 1)
            storePermanentDefault(port: port)
        }
        // Another process finds it: no delegate, no credential in the code.
        await #expect(processExitsWith: .success) { [home = home as String, port = port as Int] in
            setenv("XDG_DATA_HOME", home, 1)
            exit(fetchWithNoDelegate(port: port) == 200 ? 0 : 2)
        }
        #expect(origin.requests.count == 2, "one 401, then the stored credential")
    }

    /// The same program on a desktop: `URLCredentialStorage.shared` keeps the credential in the
    /// keyring (GNOME Keyring on a private session bus), as Apple's keeps it in the keychain.
    @Test func onADesktopThePermanentCredentialIsKeptInTheKeyring() async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        let gate = BasicAuthGate(realm: "kept", users: ["ada": "s3cret"])
        let origin = try server { request in gate.check(request) ?? .text("remembered") }
        defer { origin.shutdown() }
        let port = origin.port

        await #expect(processExitsWith: .success) {
            [environment = keyring.environment as [String: String], port = port as Int] in
            for (name, value) in environment { setenv(name, value, 1) }
            storePermanentDefault(port: port)
        }
        let lookup = try keyring.secretTool([
            "lookup", "xdg:schema", "org.sesame.Credential", "host", "localhost", "port", "\(port)", "user", "ada",
        ])
        #expect(lookup.output == "s3cret")
        let file = keyring.home.appendingPathComponent("data/sesame/credentials.json").path
        #expect(!FileManager.default.fileExists(atPath: file))

        await #expect(processExitsWith: .success) {
            [environment = keyring.environment as [String: String], port = port as Int] in
            for (name, value) in environment { setenv(name, value, 1) }
            exit(fetchWithNoDelegate(port: port) == 200 ? 0 : 2)
        }
        #expect(origin.requests.count == 2, "one 401, then the credential from the keyring")
    }
}

/// The app's settings screen: stores ada's password permanently as the space's default (exits 1
/// when it does not read back).
func storePermanentDefault(port: Int) {
    let space = URLProtectionSpace(
        host: "localhost",
        port: port,
        protocol: NSURLProtectionSpaceHTTP,
        realm: "kept",
        authenticationMethod: NSURLAuthenticationMethodHTTPBasic
    )
    URLCredentialStorage.shared.setDefaultCredential(
        URLCredential(user: "ada", password: "s3cret", persistence: .permanent),
        for: space
    )
    guard URLCredentialStorage.shared.defaultCredential(for: space)?.user == "ada" else { exit(1) }
}

/// A later run with no delegate and no credential in the code: the status of a protected GET.
func fetchWithNoDelegate(port: Int) -> Int {
    let done = DispatchSemaphore(value: 0)
    var status = 0
    URLSession.shared.dataTask(with: URL(string: "http://localhost:\(port)/private")!) {
        data,
        response,
        error in
        status = (response as? HTTPURLResponse)?.statusCode ?? -1
        done.signal()
    }.resume()
    done.wait()
    return status
}
