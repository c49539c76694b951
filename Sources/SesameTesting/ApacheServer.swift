import FoundationEssentials
import Glibc
import Sesame

/// Apache httpd with `mod_auth_digest` on loopback: `/digest/` (MD5, qop auth, `rspauth` in
/// `Authentication-Info`) and `/digest-stale/` (nonces live ``staleNonceLifetime`` seconds), realm
/// ``digestRealm``, users ``digestUsers``. Each file there answers "digest ok".
///
/// Given a ``KerberosRealm``, also `/negotiate/` behind `mod_auth_gssapi` (Kerberos only, the
/// realm's `HTTP/host` keys, each request authenticated on its own: `Persistent-Auth: false`),
/// whose `ok.txt` answers "negotiate ok", and `/negotiate-or-basic/`,
/// which offers Basic after Negotiate (the realm's users and passwords, checked by its KDC), and
/// `/negotiate-ntlm/`, which takes NTLM through SPNEGO (Debian's gss-ntlmssp, users
/// ``ntlmUsers``) with each exchange bound to its connection (`Persistent-Auth: true`).
public final class ApacheServer: Sendable {
    /// The realm of both Digest paths.
    public static let digestRealm = "Sesame Digest"
    /// The users of both Digest paths and their passwords (one is not ASCII, to test UTF-8
    /// handling).
    public static let digestUsers = ["user": "passwd", "test": "123£", "Mufasa": "Circle Of Life"]
    /// The NTLM users of `/negotiate-ntlm/` (`DOMAIN\\user`) and their passwords.
    public static let ntlmUsers = ["SESAME\\carol": "carol-ntlm-password"]
    /// How many seconds a nonce of `/digest-stale/` lives before the server calls it stale.
    public static let staleNonceLifetime = 2

    /// The loopback port Apache listens on.
    public let port: Int
    /// The scratch folder holding Apache's configuration, documents and logs; removed on deinit.
    public let prefix: URL
    private let process: ChildProcess

    /// Starts Apache on a free loopback port and returns once it answers; with `kerberos`, the
    /// Negotiate paths accept that realm's tickets; with `tls`, it speaks HTTPS (HTTP/1.1) with
    /// that certificate and its chain.
    /// - Throws: when Apache or its modules are not installed, or it does not start.
    public init(kerberos: KerberosRealm? = nil, tls: TestIssuedCertificate? = nil) async throws {
        let apache = "/usr/sbin/apache2"
        let modules = "/usr/lib/apache2/modules"
        guard FileManager.default.isExecutableFile(atPath: apache) else {
            throw TestingError("Apache is not installed: scripts/install-deps.sh installs the Debian package 'apache2'")
        }
        prefix = try ScratchFolder.make("apache")
        let htdocs = prefix.appendingPathComponent("htdocs")
        for folder in ["digest", "digest-stale", "negotiate", "negotiate-or-basic", "negotiate-ntlm"] {
            let directory = htdocs.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let text = folder.hasPrefix("negotiate") ? "negotiate ok\n" : "digest ok\n"
            try Data(text.utf8).write(to: directory.appendingPathComponent("ok.txt"))
            chmod(directory.path, 0o755)
        }
        try FileManager.default.createDirectory(
            at: prefix.appendingPathComponent("run"),
            withIntermediateDirectories: true
        )
        for path in [prefix.path, htdocs.path] { chmod(path, 0o755) }
        chmod(prefix.appendingPathComponent("run").path, 0o777)
        // htdigest lines: user:realm:MD5(user:realm:password).
        let md5 = DigestAlgorithm(hash: .md5, isSession: false)
        let lines = Self.digestUsers.sorted { $0.key < $1.key }.map { user, password in
            "\(user):\(Self.digestRealm):\(md5.hash("\(user):\(Self.digestRealm):\(password)"))"
        }
        let htdigest = prefix.appendingPathComponent("htdigest")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: htdigest)
        chmod(htdigest.path, 0o644)
        let runAs = getuid() == 0 ? "User www-data\nGroup www-data\n" : ""
        var protocols = "LoadModule http2_module \(modules)/mod_http2.so\nProtocols h2c http/1.1\nH2Direct on"
        if let tls {
            let certificate = prefix.appendingPathComponent("server.pem")
            let key = prefix.appendingPathComponent("server.key")
            try Data(tls.chainPEM.utf8).write(to: certificate)
            try Data(tls.privateKeyPEM.utf8).write(to: key)
            protocols = """
                LoadModule ssl_module \(modules)/mod_ssl.so
                SSLEngine on
                SSLCertificateFile \(certificate.path)
                SSLCertificateKeyFile \(key.path)
                """
        }
        isTLS = tls != nil
        let negotiate = try kerberos.map { try Self.negotiateConfiguration($0, modules: modules) } ?? ""
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = LoopbackPort.unused()
            let configuration = """
                LoadModule mpm_event_module \(modules)/mod_mpm_event.so
                LoadModule authn_core_module \(modules)/mod_authn_core.so
                LoadModule authn_file_module \(modules)/mod_authn_file.so
                LoadModule auth_digest_module \(modules)/mod_auth_digest.so
                LoadModule authz_core_module \(modules)/mod_authz_core.so
                LoadModule authz_user_module \(modules)/mod_authz_user.so
                \(runAs)ServerName localhost
                \(protocols)
                Listen 127.0.0.1:\(port)
                PidFile \(prefix.path)/run/httpd.pid
                DefaultRuntimeDir \(prefix.path)/run
                Mutex file:\(prefix.path)/run default
                ErrorLog \(prefix.path)/error.log
                LogFormat "%>s %r" sesame
                CustomLog \(prefix.path)/access.log sesame
                CustomLog \(prefix.path)/users.log "%u %r"
                LogLevel warn
                StartServers 1
                ServerLimit 1
                ThreadsPerChild 16
                MaxRequestWorkers 16
                DocumentRoot \(htdocs.path)
                <Directory \(htdocs.path)>
                    Require all granted
                </Directory>
                <Location /digest/>
                    AuthType Digest
                    AuthName "\(Self.digestRealm)"
                    AuthDigestDomain /digest/
                    AuthDigestProvider file
                    AuthUserFile \(htdigest.path)
                    Require valid-user
                </Location>
                <Location /digest-stale/>
                    AuthType Digest
                    AuthName "\(Self.digestRealm)"
                    AuthDigestDomain /digest-stale/
                    AuthDigestProvider file
                    AuthUserFile \(htdigest.path)
                    AuthDigestNonceLifetime \(Self.staleNonceLifetime)
                    Require valid-user
                </Location>
                \(negotiate)
                """
            let configurationPath = prefix.appendingPathComponent("httpd.conf").path
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: configurationPath))
            var environment = ["PATH": "/usr/sbin:/usr/bin:/bin"]
            if let kerberos {
                environment["KRB5_CONFIG"] = kerberos.configurationFile.path
                environment["NTLM_USER_FILE"] = try Self.ntlmUserFile(in: prefix).path
            }
            let process = try ChildProcess(
                executable: apache,
                arguments: ["-d", prefix.path, "-f", configurationPath, "-D", "FOREGROUND"],
                environment: environment,
                logPath: prefix.appendingPathComponent("stderr.log").path
            )
            if await LoopbackPort.waitUntilListening(
                [port],
                by: process.pid,
                timeout: .seconds(10),
                isAlive: { process.isRunning }
            ) {
                self.port = port
                self.process = process
                return
            }
            process.stop()
            lastError = TestingError(
                "Apache did not start: \(readText(prefix.appendingPathComponent("stderr.log").path)) \(readText(prefix.appendingPathComponent("error.log").path))"
            )
        }
        throw lastError ?? TestingError("Apache did not start")
    }

    /// The access log: one "STATUS REQUEST-LINE" line per request (written as requests finish).
    public var accessLog: [String] {
        readText(prefix.appendingPathComponent("access.log").path).split(separator: "\n").map(String.init)
    }

    /// The access log once it has at least `count` lines (Apache writes a line after its response,
    /// and over HTTP/2 after the stream ends), or as it is when `timeout` passes first.
    public func accessLog(atLeast count: Int, timeout: Duration = .seconds(10)) async -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let log = accessLog
            if log.count >= count || ContinuousClock.now >= deadline { return log }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The user each request authenticated as and its request line ("alice@SESAME.TEST GET
    /// /negotiate/ok.txt HTTP/1.1"; "-" for none), as requests finish.
    public var authenticatedUsers: [String] {
        readText(prefix.appendingPathComponent("users.log").path).split(separator: "\n").map(String.init)
    }

    /// gss-ntlmssp's user file (`DOMAIN:user:password` lines) for ``ntlmUsers``.
    private static func ntlmUserFile(in folder: URL) throws -> URL {
        let lines = ntlmUsers.sorted { $0.key < $1.key }.map { name, password in
            name.replacing("\\", with: ":") + ":" + password
        }
        let file = folder.appendingPathComponent("ntlm-users")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
        chmod(file.path, 0o644)
        return file
    }

    /// The configuration of the Negotiate paths for `realm`.
    private static func negotiateConfiguration(_ realm: KerberosRealm, modules: String) throws -> String {
        guard FileManager.default.fileExists(atPath: "\(modules)/mod_auth_gssapi.so") else {
            throw TestingError(
                "mod_auth_gssapi is not installed: scripts/install-deps.sh installs libapache2-mod-auth-gssapi"
            )
        }
        // On the second path, Basic's password is checked by Kerberos (a ticket is asked for it).
        return """
            LoadModule auth_gssapi_module \(modules)/mod_auth_gssapi.so
            <Location /negotiate/>
                AuthType GSSAPI
                AuthName "Kerberos"
                GssapiCredStore keytab:\(realm.keytab.path)
                GssapiAllowedMech krb5
                GssapiSignalPersistentAuth On
                Require valid-user
            </Location>
            <Location /negotiate-ntlm/>
                AuthType GSSAPI
                AuthName "NTLM"
                GssapiAllowedMech ntlmssp
                GssapiConnectionBound On
                GssapiSignalPersistentAuth On
                Require valid-user
            </Location>
            <Location /negotiate-or-basic/>
                AuthType GSSAPI
                AuthName "Kerberos or password"
                GssapiCredStore keytab:\(realm.keytab.path)
                GssapiAllowedMech krb5
                GssapiBasicAuth On
                GssapiBasicAuthMech krb5
                Require valid-user
            </Location>
            """
    }

    /// `http://127.0.0.1:PORT` (`https` with TLS).
    public var baseURL: String { "\(isTLS ? "https" : "http")://127.0.0.1:\(port)" }

    /// Whether it speaks HTTPS.
    public let isTLS: Bool

    /// Stops Apache and its workers.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: prefix)
    }
}
