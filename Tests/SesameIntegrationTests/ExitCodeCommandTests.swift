import Foundation
import SesameTesting
import Testing

/// Every `sesame` failure exits with the code its cause deserves, and says what failed: a file the
/// options name is the user's input (exit 1, or 2 for a misuse of the options, 5 for a client
/// certificate or key), never a network (3), trust (4) or authentication (6) failure.
@Suite struct ExitCodeCommandTests {
    func scratch(_ name: String, _ contents: String) throws -> String {
        let path = try ScratchFolder.make("exit-codes").appendingPathComponent(name).path
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func server() throws -> LocalServer {
        var configuration = LocalServer.Configuration(identity: nil)
        configuration.handler = { request in
            BasicAuthGate(realm: "codes", users: ["ada": "x"]).check(request) ?? .text("in")
        }
        return try LocalServer(configuration)
    }

    @Test func theOptionsFilesFailAsInputNamingTheFile() async throws {
        let origin = try server()
        defer { origin.shutdown() }
        let url = "http://localhost:\(origin.port)/"
        let garbage = try scratch("garbage.pem", "not a certificate\n")
        let folder = try ScratchFolder.make("exit-codes-folder").path
        let corruptStore = try scratch("store.json", "{ not json")
        let cases: [(arguments: [String], status: Int32, names: String)] = [
            (["--cacert", garbage, url], 1, garbage),
            (["--cacert", garbage + ".missing", url], 1, garbage + ".missing"),
            (["--capath", folder + "/none", url], 1, folder + "/none"),
            (["--pin-cert", garbage, url], 1, garbage),
            (["--crl", garbage, url], 1, garbage),
            // A cookie "file" that is a folder cannot be read.
            (["-b", folder, url], 1, folder),
            // The store is read when the 401 asks for a credential: still the input, exit 1.
            (["--credential-store", corruptStore, url + "private"], 1, corruptStore),
            (["--pinning-mode", "certificate", url], 2, "--pin-cert"),
            (["-E", garbage, url], 5, garbage),
        ]
        for (arguments, status, names) in cases {
            let run = try await runSesame(arguments)
            #expect(run.status == status, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(names), "\(arguments): \(run.stderr)")
        }
    }

    @Test func aCookieJarThatCannotBeWrittenFailsAsInputAfterTheTransfer() async throws {
        let origin = try server()
        defer { origin.shutdown() }
        let jar = try ScratchFolder.make("exit-codes-jar").appendingPathComponent("missing/jar.txt").path
        let run = try await runSesame(["-c", jar, "http://localhost:\(origin.port)/"])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains(jar), "\(run.stderr)")
    }
}
