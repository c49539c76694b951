import FoundationEssentials
import Sesame
import SesameTesting

/// The demo's credential-storage step: a permanent credential kept between runs.
enum DemoStorageSteps {
    /// The port the permanent step's server prefers, so that a stored credential's protection
    /// space is the same from one run to the next.
    static let permanentPort = 47_321

    static func permanent(_ demo: DemoContext) async throws {
        let gate = BasicAuthGate(realm: "Sesame Demo Permanent", users: ["grace": "cobol"])
        var configuration = LocalServer.Configuration(identity: try demo.pki.leaf())
        configuration.handler = { request in gate.check(request) ?? .text("hello \(gate.user(request) ?? "?")") }
        configuration.port = permanentPort
        let server: LocalServer
        do {
            server = try LocalServer(configuration)
        } catch {
            configuration.port = 0
            server = try LocalServer(configuration)
            demo.say("port \(permanentPort) is busy: this run's credential cannot be found by the next run")
        }
        defer { server.shutdown() }
        let file = Self.permanentStoreURL()
        // As CredentialStorage.shared chooses: the desktop keyring where a Secret Service answers
        // (GNOME Keyring, KeePassXC), else a private file (the demo's own, never the real one).
        let storage = CredentialStorage.automatic(fileURL: file)
        demo.say("permanent credential store: \(try storage.store?.location ?? "memory")")
        let url = try demo.url(port: server.port, path: "/profile")
        guard let space = ProtectionSpace(url: url, realm: gate.realm, authenticationMethod: .httpBasic) else {
            throw DemoFailure("no protection space for \(url)")
        }
        let stored = try storage.defaultCredential(for: space)
        if let stored {
            demo.say("found \(stored) from a previous run")
        } else {
            // First run: the delegate answers with a permanent credential, which is stored.
            let delegate = DemoPasswordSteps.Listing41(
                Credential(user: "grace", password: "cobol", persistence: .permanent),
                demo
            )
            let session = permanentSession(demo, storage: storage, delegate: delegate)
            let (_, response) = try await session.data(from: url)
            try expect(response.status == 200, "status \(response.status)")
            demo.say(
                "stored: \(try storage.defaultCredential(for: space)?.description ?? "nothing")"
            )
        }
        // A new session, as a new process would make, with no delegate at all: the stored
        // credential answers the challenge.
        let fresh = permanentSession(demo, storage: .automatic(fileURL: file), delegate: nil)
        let (data, response) = try await fresh.data(from: url)
        demo.say("a fresh session without a delegate: \(response.status) \(String(decoding: data, as: UTF8.self))")
        try expect(response.status == 200, "status \(response.status)")
        demo.say("run `sesame demo --step permanent` again: the credential comes from the store at once")
    }

    static func permanentSession(
        _ demo: DemoContext,
        storage: CredentialStorage,
        delegate: (any SessionTaskDelegate)?
    ) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls = demo.privateAnchorConfiguration
        configuration.credentialStorage = storage
        configuration.eventObserver = { event in
            if case .challenge(let trace) = event, trace.protectionSpace.authenticationMethod != .serverTrust {
                demo.say("challenge \(trace)")
            }
        }
        return Session(configuration: configuration, delegate: delegate)
    }

    /// `$XDG_DATA_HOME/sesame/demo-credentials.json` (else `~/.local/share/...`): the demo never
    /// touches the real credential file. (In a keyring, its item is labelled "Sesame: grace@localhost:47321".)
    static func permanentStoreURL() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        return base.appendingPathComponent("sesame/demo-credentials.json")
    }
}
