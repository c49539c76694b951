import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Every option, store and command that reads a file refuses what is not a regular file of a
/// sensible size, at once and by name: a FIFO (which would block for ever), a device (`/dev/zero`
/// grew the process by gigabytes), a file far larger than its kind. Each run is killed if it hangs.
@Suite struct HostileFileCommandTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    func sesame(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLIRun {
        try await runSesame(arguments, environment: environment, killAfter: .seconds(30))
    }

    static func fifo(_ name: String) throws -> String {
        let path = try ScratchFolder.make("hostile-files").appendingPathComponent(name).path
        unlink(path)
        guard mkfifo(path, 0o600) == 0 else { throw SesameError(.ioError, "mkfifo \(path)") }
        return path
    }

    static func server() throws -> LocalServer {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { request in
            BasicAuthGate(realm: "files", users: ["ada": "x"]).check(request) ?? .text("in")
        }
        return try LocalServer(configuration)
    }

    /// Options whose file is read before any request goes out; the URL is never reached.
    @Test(arguments: [
        ["--cacert", "FILE"], ["--crl", "FILE"], ["--pin-cert", "FILE"], ["-E", "FILE"],
        ["-E", "FILE", "--cert-type", "P12"], ["--cert", "FILE", "--key", "FILE"], ["-d", "@FILE"],
        ["--data-binary", "@FILE"], ["--data-urlencode", "name@FILE"], ["-F", "field=<FILE"], ["-b", "FILE"],
    ])
    func aFileOptionRefusesAFIFOAndADevice(_ template: [String]) async throws {
        for file in [try Self.fifo("option"), "/dev/zero"] {
            let arguments = template.map { $0.replacingOccurrences(of: "FILE", with: file) }
            let run = try await sesame(arguments + ["http://127.0.0.1:1/"])
            #expect(run.status != 137, "\(arguments) hung")
            #expect(run.status != 0 && run.stderr.contains("not a regular file"), "\(arguments): \(run.stderr)")
        }
    }

    @Test func trustEvaluateRefusesAFIFOAndADeviceForEachOfItsFiles() async throws {
        let pki = Self.pki
        let folder = try ScratchFolder.make("hostile-trust-\(UUID().uuidString)")
        let leaf = folder.appendingPathComponent("leaf.pem").path
        let root = folder.appendingPathComponent("root.pem").path
        try Data(pki.leaf().chainPEM.utf8).write(to: URL(fileURLWithPath: leaf))
        try Data(pki.root.certificate.pemEncoded.utf8).write(to: URL(fileURLWithPath: root))
        let base = ["trust", "evaluate", "--leaf", leaf, "--anchors", root, "--host", "localhost"]
        let good = try await sesame(base)
        #expect(good.status == 0, "\(good.stderr)")
        for option in ["--leaf", "--anchors", "--intermediates", "--crl", "--ocsp"] {
            for file in [try Self.fifo("trust"), "/dev/zero"] {
                var arguments = base
                if let index = arguments.firstIndex(of: option) {
                    arguments[index + 1] = file
                } else {
                    arguments += [option, file]
                }
                let run = try await sesame(arguments)
                #expect(run.status != 137, "\(option) hung")
                #expect(run.stderr.contains("not a regular file"), "\(option) \(file): \(run.stderr)")
            }
        }
    }

    /// A CA folder holding a FIFO is read without it (OpenSSL's own lookup would block on it).
    @Test func aCAFolderWithAFIFOIsReadWithoutIt() async throws {
        let tls = try LocalServer(LocalServer.Configuration(identity: try Self.pki.leaf()))
        defer { tls.shutdown() }
        let folder = try ScratchFolder.make("capath-\(UUID().uuidString)")
        try Data(Self.pki.root.certificate.pemEncoded.utf8).write(to: folder.appendingPathComponent("root.pem"))
        #expect(mkfifo(folder.appendingPathComponent("trap.pem").path, 0o600) == 0)
        let run = try await sesame(["--capath", folder.path, "https://localhost:\(tls.port)/"])
        #expect(run.status == 0, "\(run.stderr)")
    }

    /// `.netrc` is read when a 401 comes: a FIFO or a 10 MB file there is an error, not a hang or
    /// a process hundreds of megabytes large.
    @Test func aNetrcThatIsNotAFileIsRefusedWhenItIsNeeded() async throws {
        let origin = try Self.server()
        defer { origin.shutdown() }
        let huge = try ScratchFolder.make("netrc-huge").appendingPathComponent("netrc").path
        try Data(String(repeating: "machine other.test login a password b\n", count: 300_000).utf8)
            .write(to: URL(fileURLWithPath: huge))
        for (file, says) in [(try Self.fifo("netrc"), "not a regular file"), (huge, "may hold 1048576 bytes at most")] {
            let run = try await sesame(["--netrc-file", file, origin.baseURL + "/"])
            #expect(run.status != 137, "hung")
            #expect(run.stderr.contains(says), "\(run.stderr)")
        }
    }

    /// The credential store at its path: a FIFO stops `credentials list`, `credentials add` and a
    /// fetch that meets a 401 with a clear error; a gigabyte is refused from its size.
    @Test func aCredentialStoreThatIsNotAFileIsRefused() async throws {
        let origin = try Self.server()
        defer { origin.shutdown() }
        let data = try ScratchFolder.make("store-\(UUID().uuidString)")
        let folder = data.appendingPathComponent("sesame")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        chmod(folder.path, 0o700)
        let store = folder.appendingPathComponent("credentials.json").path
        let environment = ["XDG_DATA_HOME": data.path, "DBUS_SESSION_BUS_ADDRESS": "disabled:"]
        let makers: [() -> Bool] = [
            { mkfifo(store, 0o600) == 0 },
            {
                let fd = open(store, O_CREAT | O_WRONLY, 0o600)
                defer { close(fd) }
                return ftruncate(fd, 1 << 30) == 0
            },
        ]
        for make in makers {
            unlink(store)
            #expect(make())
            for arguments in [
                ["credentials", "list", "--credential-store", "file"],
                ["credentials", "add", origin.baseURL + "/", "-u", "ada:x", "--credential-store", "file"],
                [origin.baseURL + "/", "--credential-store", "file"],
            ] {
                let run = try await sesame(arguments, environment: environment)
                #expect(run.status != 137, "\(arguments) hung")
                #expect(
                    run.stderr.contains("credential store '\(store)'"),
                    "\(arguments): \(run.stderr)"
                )
            }
        }
    }

    /// A PKCS#12 file that asks for 2^31-1 iterations is refused at once; one that legitimately
    /// takes a while to decrypt still ends within `-m`.
    @Test func aCostlyPKCS12IsRefusedOrBoundedByTheDeadline() async throws {
        let client = try Self.pki.clientCertificate(commonName: "costly")
        let folder = try ScratchFolder.make("p12-\(UUID().uuidString)")
        let bomb = folder.appendingPathComponent("bomb.p12").path
        try client.pkcs12(password: "pw", claimedMACIterations: Int(Int32.max)).write(to: URL(fileURLWithPath: bomb))
        let refused = try await sesame(["-E", "\(bomb):pw", "http://127.0.0.1:1/"])
        #expect(refused.status == 5, "\(refused.stderr)")
        #expect(refused.stderr.contains("asks for 2147483647 iterations"), "\(refused.stderr)")
        let slow = folder.appendingPathComponent("slow.p12").path
        try client.pkcs12(password: "pw", iterations: 900_000).write(to: URL(fileURLWithPath: slow))
        let bounded = try await sesame(["-m", "0.2", "-E", "\(slow):pw", "http://127.0.0.1:1/"])
        #expect(bounded.status == 5, "\(bounded.stderr)")
        #expect(bounded.stderr.contains("still loading when -m"), "\(bounded.stderr)")
    }
}
