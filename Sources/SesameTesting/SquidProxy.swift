import FoundationEssentials
import Glibc
import Sesame

/// squid (Debian package `squid`) as an authenticating forward proxy on loopback: plain requests
/// in absolute form and `CONNECT` tunnels to any loopback port, for users ``users`` only.
///
/// ``Scheme/basic`` offers Basic (`basic_ncsa_auth`); ``Scheme/digestFirst`` offers Digest MD5
/// (`digest_file_auth`) first and Basic second, as squid does when both are configured;
/// ``Scheme/negotiate(_:)`` offers Negotiate (`negotiate_kerberos_auth` with the realm's
/// `HTTP/localhost` key, so the proxy is reached as `localhost`). squid removes
/// `Proxy-Authorization` before forwarding. Nothing is cached.
public final class SquidProxy: Sendable {
    /// The authentication scheme the proxy asks for.
    public enum Scheme: Sendable, Equatable {
        /// Basic only.
        case basic
        /// Digest MD5 first, Basic second.
        case digestFirst
        /// Negotiate (Kerberos) only, for the users of this realm.
        case negotiate(KerberosRealm)

        public static func == (lhs: Scheme, rhs: Scheme) -> Bool {
            switch (lhs, rhs) {
            case (.basic, .basic), (.digestFirst, .digestFirst): true
            case (.negotiate(let a), .negotiate(let b)): a === b
            default: false
            }
        }
    }

    /// The realm of both schemes.
    public static let realm = "Sesame Squid"
    /// The users the proxy accepts.
    public static let users = ["puser": "ppass"]

    /// The loopback port squid listens on.
    public let port: Int
    /// The scratch folder holding squid's configuration, password files and logs.
    public let prefix: URL
    private let process: ChildProcess

    /// Starts squid asking for `scheme` on a free loopback port and returns once it answers.
    /// - Throws: when squid or its helpers are not installed, or it does not start.
    public init(scheme: Scheme) async throws {
        let squid = "/usr/sbin/squid"
        guard FileManager.default.isExecutableFile(atPath: squid) else {
            throw TestingError("squid is not installed: scripts/install-deps.sh installs the Debian package 'squid'")
        }
        prefix = try ScratchFolder.make("squid")
        chmod(prefix.path, 0o777)  // squid runs as `proxy` when started as root, and logs here
        let basicFile = prefix.appendingPathComponent("passwd.basic").path
        let digestFile = prefix.appendingPathComponent("passwd.digest").path
        for (user, password) in Self.users {
            let htpasswd = try ChildProcess(
                executable: "/usr/bin/htpasswd",
                arguments: [
                    "-b", "-m", FileManager.default.fileExists(atPath: basicFile) ? "" : "-c", basicFile, user,
                    password,
                ]
                .filter { !$0.isEmpty },
                environment: ["PATH": "/usr/bin:/bin"],
                logPath: prefix.appendingPathComponent("htpasswd.log").path
            )
            guard htpasswd.wait() == 0 else {
                throw TestingError(
                    "htpasswd (Debian package apache2-utils) failed: \(readText(prefix.appendingPathComponent("htpasswd.log").path))"
                )
            }
        }
        let digestLines = Self.users.map { "\($0.key):\($0.value)" }.sorted().joined(separator: "\n") + "\n"
        try Data(digestLines.utf8).write(to: URL(fileURLWithPath: digestFile))
        chmod(basicFile, 0o644)
        chmod(digestFile, 0o644)
        let digest = """
            auth_param digest program /usr/lib/squid/digest_file_auth \(digestFile)
            auth_param digest children 2
            auth_param digest realm \(Self.realm)
            auth_param digest nonce_garbage_interval 5 minutes
            auth_param digest nonce_max_duration 30 minutes
            auth_param digest nonce_max_count 1000

            """
        var helperEnvironment: [String: String] = [:]
        var negotiate = ""
        if case .negotiate(let realm) = scheme {
            // The helper reads the keytab named by KRB5_KTNAME; squid passes its environment on.
            helperEnvironment = realm.environment
            helperEnvironment["KRB5_KTNAME"] = "FILE:" + realm.keytab.path
            negotiate = """
                auth_param negotiate program /usr/lib/squid/negotiate_kerberos_auth -s HTTP/localhost@\(KerberosRealm.name)
                auth_param negotiate children 2
                auth_param negotiate keep_alive on

                """
        }
        let basic = """
            auth_param basic program /usr/lib/squid/basic_ncsa_auth \(basicFile)
            auth_param basic children 2
            auth_param basic realm \(Self.realm)

            """
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = LoopbackPort.unused()
            let configuration = """
                http_port 127.0.0.1:\(port)
                pid_filename \(prefix.path)/squid.pid
                cache_log \(prefix.path)/cache.log
                access_log stdio:\(prefix.path)/access.log
                cache_store_log none
                logfile_rotate 0
                coredump_dir \(prefix.path)
                cache deny all
                cache_mem 8 MB
                shutdown_lifetime 0 seconds
                netdb_filename none
                \(scheme == .digestFirst ? digest : "")\(negotiate.isEmpty ? basic : negotiate)acl authed proxy_auth REQUIRED
                http_access allow authed
                http_access deny all
                """
            let configurationPath = prefix.appendingPathComponent("squid.conf").path
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: configurationPath))
            chmod(configurationPath, 0o644)
            let process = try ChildProcess(
                executable: squid,
                arguments: ["-N", "-f", configurationPath],
                environment: helperEnvironment.merging(["PATH": "/usr/sbin:/usr/bin:/bin"]) { $1 },
                logPath: prefix.appendingPathComponent("stderr.log").path
            )
            if await LoopbackPort.waitUntilListening(
                [port],
                by: process.pid,
                timeout: .seconds(15),
                isAlive: { process.isRunning }
            ) {
                self.port = port
                self.process = process
                return
            }
            process.stop()
            lastError = TestingError(
                "squid did not start: \(readText(prefix.appendingPathComponent("stderr.log").path)) \(readText(prefix.appendingPathComponent("cache.log").path))"
            )
        }
        throw lastError ?? TestingError("squid did not start")
    }

    /// `http://127.0.0.1:PORT`, the proxy URL.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// squid's access log (native format: one line per request, with the user name).
    public var accessLog: [String] {
        readText(prefix.appendingPathComponent("access.log").path).split(separator: "\n").map(String.init)
    }

    /// Stops squid and its helpers. Returns at once: squid takes over a second to shut down
    /// (even with a zero `shutdown_lifetime`); its directory goes once it has exited.
    public func stop() {
        let prefix = prefix
        process.stopInBackground { try? FileManager.default.removeItem(at: prefix) }
    }
}
