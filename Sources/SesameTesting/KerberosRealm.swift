import FoundationEssentials
import Glibc

/// A Kerberos realm of its own on loopback: MIT's `krb5kdc` with a scratch database, users with
/// passwords, and service principals in a keytab for the servers the tests start (Apache's
/// `mod_auth_gssapi`, squid). The realm's `krb5.conf` sends every lookup to this KDC only.
///
/// Kerberos clients find the realm through `KRB5_CONFIG`: ``environment`` holds it for child
/// processes, and ``useInThisProcess()`` sets it for Sesame in the test process itself.
public final class KerberosRealm: Sendable {
    /// The realm's name.
    public static let name = "SESAME.TEST"
    /// The users and their passwords.
    public static let users = ["alice": "alice-kerberos-password", "bob": "bob-kerberos-password"]

    /// The KDC's loopback port (TCP and UDP).
    public let port: Int
    /// The folder holding the database, configuration, keytab and logs; removed by ``stop()``.
    public let prefix: URL
    /// The realm's `krb5.conf`.
    public let configurationFile: URL
    /// The keytab holding every service principal, for the servers to accept tickets with.
    public let keytab: URL
    /// The service principals (`HTTP/localhost`), without the realm.
    public let services: [String]
    private let process: ChildProcess

    /// Creates the realm with `services` (such as `HTTP/localhost`) and starts its KDC.
    /// - Throws: when MIT Kerberos's KDC tools are not installed, or the KDC does not start.
    public init(services: [String] = ["HTTP/localhost", "HTTP/127.0.0.1"]) async throws {
        for tool in ["/usr/sbin/krb5kdc", "/usr/sbin/kdb5_util", "/usr/sbin/kadmin.local", "/usr/bin/kinit"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            throw TestingError(
                "\(tool) is missing: scripts/install-deps.sh installs krb5-kdc, krb5-admin-server and krb5-user"
            )
        }
        prefix = try ScratchFolder.make("kerberos")
        chmod(prefix.path, 0o755)
        configurationFile = prefix.appendingPathComponent("krb5.conf")
        keytab = prefix.appendingPathComponent("services.keytab")
        self.services = services
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = LoopbackPort.unused()
            do {
                try Self.writeConfiguration(prefix: prefix, port: port)
                let environment = Self.environment(prefix: prefix)
                if !FileManager.default.fileExists(atPath: prefix.appendingPathComponent("principal").path) {
                    try Self.createDatabase(services: services, keytab: keytab, environment: environment, in: prefix)
                }
                let process = try ChildProcess(
                    executable: "/usr/sbin/krb5kdc",
                    arguments: ["-n"],
                    environment: environment,
                    logPath: prefix.appendingPathComponent("krb5kdc.out").path
                )
                if await LoopbackPort.waitUntilListening([port], by: process.pid, isAlive: { process.isRunning }) {
                    self.port = port
                    self.process = process
                    return
                }
                process.stop()
                lastError = TestingError(
                    "krb5kdc did not start: \(readText(prefix.appendingPathComponent("krb5kdc.out").path))"
                )
            } catch {
                lastError = error
            }
        }
        throw lastError ?? TestingError("krb5kdc did not start")
    }

    /// The realm of this test process, started on first use with `HTTP/localhost`, and pointed to
    /// by this process's Kerberos (``useInThisProcess()``). `KRB5_CONFIG` is process-wide, so
    /// every test that uses Kerberos in the process shares this one.
    public static func shared() async throws -> KerberosRealm { try await sharedRealm.value }

    private static let sharedRealm = Task { () throws -> KerberosRealm in
        let realm = try await KerberosRealm(services: ["HTTP/localhost"])
        realm.useInThisProcess()
        return realm
    }

    /// `KRB5_CONFIG` and `KRB5_KDC_PROFILE` for processes that use the realm.
    public var environment: [String: String] { Self.environment(prefix: prefix) }

    /// The default ticket cache of a process that uses the realm (``useInThisProcess()``): a
    /// file of the realm's folder, empty until ``kinit(_:into:lifetime:)`` fills it. Tests that
    /// fill or empty it run one at a time.
    public var defaultCache: String { "FILE:" + prefix.appendingPathComponent("default.ccache").path }

    /// Points Kerberos in this process at the realm (`KRB5_CONFIG`) and its default ticket cache at
    /// ``defaultCache`` (`KRB5CCNAME`). GSSAPI in this process knows its built-in mechanisms only
    /// (`GSS_MECH_CONFIG` names an empty file): a mechanism the machine has installed, such as
    /// gss-ntlmssp, then neither changes what SPNEGO does nor brings its own leaks into the
    /// sanitizers' reports. Use ``ntlmMechanismEnvironment()`` for a child process that should
    /// have NTLM. Process-wide, and done once, before any test uses Kerberos, by ``shared()``:
    /// the environment is not changed while other threads may read it.
    public func useInThisProcess() {
        setenv("KRB5_CONFIG", configurationFile.path, 1)
        setenv("KRB5CCNAME", defaultCache, 1)
        setenv("GSS_MECH_CONFIG", prefix.appendingPathComponent("no-mechanisms.conf").path, 1)
    }

    /// ``environment`` with `GSS_MECH_CONFIG` naming gss-ntlmssp (Debian's `gss-ntlmssp`) as the
    /// one installed mechanism, for a child process that takes NTLM through SPNEGO.
    /// - Throws: when gss-ntlmssp is not installed.
    public func ntlmMechanismEnvironment() throws -> [String: String] {
        let library = "/usr/lib/x86_64-linux-gnu/gssntlmssp/gssntlmssp.so"
        guard FileManager.default.fileExists(atPath: library) else {
            throw TestingError("gss-ntlmssp is not installed: scripts/install-deps.sh installs it")
        }
        let file = prefix.appendingPathComponent("ntlmssp-mechanism.conf")
        try Data("gssntlmssp_v1 1.3.6.1.4.1.311.2.2.10 \(library)\n".utf8).write(to: file)
        var environment = self.environment
        environment["GSS_MECH_CONFIG"] = file.path
        return environment
    }

    /// Gets a ticket for `user` into `cache` (`FILE:path`) with `kinit`, valid for `lifetime`
    /// (`kinit -l`; the realm grants up to 10 hours).
    public func kinit(_ user: String, into cache: String, lifetime: String = "1h") throws {
        guard let password = Self.users[user] else { throw TestingError("\(user) is not a user of the realm") }
        let input = prefix.appendingPathComponent("kinit-\(UUID().uuidString).in")
        try Data((password + "\n").utf8).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        var environment = self.environment
        environment["KRB5CCNAME"] = cache
        let log = prefix.appendingPathComponent("kinit.log").path
        let status = try ChildProcess(
            executable: "/usr/bin/kinit",
            arguments: ["-l", lifetime, user],
            environment: environment,
            logPath: log,
            inputPath: input.path
        ).wait()
        guard status == 0 else { throw TestingError("kinit \(user) failed: \(readText(log))") }
    }

    /// Whether `cache` holds a ticket that has not expired (`klist -s`).
    public func holdsValidTicket(_ cache: String) throws -> Bool {
        var environment = self.environment
        environment["KRB5CCNAME"] = cache
        let status = try ChildProcess(
            executable: "/usr/bin/klist",
            arguments: ["-s"],
            environment: environment,
            logPath: prefix.appendingPathComponent("klist.log").path
        ).wait()
        return status == 0
    }

    /// Empties `cache` (`FILE:path`): the user holds no ticket.
    public func kdestroy(_ cache: String) {
        try? FileManager.default.removeItem(atPath: String(cache.dropFirst("FILE:".count)))
    }

    /// Stops the KDC and removes the realm's folder.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: prefix)
    }

    private static func environment(prefix: URL) -> [String: String] {
        [
            "KRB5_CONFIG": prefix.appendingPathComponent("krb5.conf").path,
            "KRB5_KDC_PROFILE": prefix.appendingPathComponent("kdc.conf").path,
            "PATH": "/usr/sbin:/usr/bin:/bin",
        ]
    }

    private static func writeConfiguration(prefix: URL, port: Int) throws {
        // No DNS, no reverse lookups: a principal is the host exactly as the URL names it. The KDC
        // allows one second of clock skew (Kerberos allows five minutes by default), so that it
        // refuses an expired ticket a second after its end; clients and servers keep the default,
        // so that a slow run (under a sanitizer) is not taken for a replay or a stale request.
        let client = """
            [libdefaults]
                default_realm = \(name)
                dns_lookup_realm = false
                dns_lookup_kdc = false
                rdns = false
                dns_canonicalize_hostname = false
                udp_preference_limit = 1
            [realms]
                \(name) = {
                    kdc = 127.0.0.1:\(port)
                }
            """
        let kdc = """
            [libdefaults]
                clockskew = 1
            [kdcdefaults]
                kdc_listen = 127.0.0.1:\(port)
                kdc_tcp_listen = 127.0.0.1:\(port)
            [realms]
                \(name) = {
                    database_name = \(prefix.path)/principal
                    key_stash_file = \(prefix.path)/stash
                    acl_file = \(prefix.path)/kadm5.acl
                    max_life = 10h
                    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
                }
            [logging]
                kdc = FILE:\(prefix.path)/kdc.log
            """
        try Data(client.utf8).write(to: prefix.appendingPathComponent("krb5.conf"))
        try Data().write(to: prefix.appendingPathComponent("no-mechanisms.conf"))
        try Data(kdc.utf8).write(to: prefix.appendingPathComponent("kdc.conf"))
        chmod(prefix.appendingPathComponent("krb5.conf").path, 0o644)
    }

    private static func createDatabase(
        services: [String],
        keytab: URL,
        environment: [String: String],
        in prefix: URL
    ) throws {
        let log = prefix.appendingPathComponent("setup.log").path
        func run(_ tool: String, _ arguments: [String]) throws {
            let status = try ChildProcess(
                executable: tool,
                arguments: arguments,
                environment: environment,
                logPath: log
            ).wait()
            guard status == 0 else {
                throw TestingError("\(tool) \(arguments.joined(separator: " ")) failed: \(readText(log))")
            }
        }
        try run("/usr/sbin/kdb5_util", ["create", "-s", "-r", name, "-P", "sesame-master-\(UUID().uuidString)"])
        for (user, password) in users.sorted(by: { $0.key < $1.key }) {
            try run("/usr/sbin/kadmin.local", ["-q", "addprinc -pw \(password) \(user)"])
        }
        for service in services {
            try run("/usr/sbin/kadmin.local", ["-q", "addprinc -randkey \(service)"])
            try run("/usr/sbin/kadmin.local", ["-q", "ktadd -k \(keytab.path) \(service)"])
        }
        // Servers that drop privileges (Apache's workers) read it; it is a scratch realm's.
        chmod(keytab.path, 0o644)
    }
}
