import FoundationEssentials
import Glibc
import Sesame

/// nginx on loopback with a configuration of our own: plain and TLS servers (certificate from a
/// `TestPKI`), static files, gzip, redirects, header echoes, and an access log that names each
/// request's connection (to prove keep-alive reuse).
///
/// Files served: `/small.txt` ("hello nginx\n"), `/large.bin` (``largeFile``, 1 MiB), `/text.txt`
/// (``text``, gzip-compressed and chunked when asked). Locations: `/echo` (the Authorization and
/// Cookie it received), `/redirect` (302 to `/small.txt`), `/to-other-port` and `/to-https`
/// (307 to `/echo` on the other port), `/missing-page` (404).
public final class NginxServer: Sendable {
    /// The plain HTTP port.
    public let httpPort: Int
    /// The HTTPS port (certificate: a `localhost` leaf of the PKI, with its intermediate).
    public let httpsPort: Int
    /// The same server as ``httpsPort`` (Basic under /basic/, redirects, gzip), with HTTP/2
    /// offered in ALPN.
    public let http2Port: Int
    /// The folder holding the configuration, logs and files.
    public let prefix: URL
    private let process: ChildProcess

    /// Processor time nginx's processes (master and workers) have run, in seconds; differences
    /// over a run show how busy the server was (``ChildProcess/treeProcessorSeconds``).
    public var processorSeconds: Double? { process.treeProcessorSeconds }

    /// The 1 MiB static file's contents.
    public static let largeFile = [UInt8]((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    /// The text file's contents.
    public static let text = String(repeating: "nginx compresses this text. ", count: 4_000)

    /// Starts nginx (Debian package `nginx`) on two free loopback ports.
    /// - Throws: naming the missing package when nginx is not installed.
    /// The realm of `/basic/`.
    public static let basicRealm = "Sesame Basic"
    /// The users `/basic/` accepts, by name.
    public static let basicUsers = ["user": "passwd", "test": "123£"]

    /// HTTPS ports serving certificates that must fail (or pass) in specific ways, by name:
    /// `expired`, `wrong-host`, `untrusted-root`, `self-signed`, `leaf-only` (the intermediate is
    /// not sent), `rsa` (a valid RSA-2048 leaf; the main port's is ECDSA P-256), `ocsp-good` and
    /// `ocsp-revoked` (valid leaves whose stapled OCSP response says good and revoked), and
    /// `client-certificate` (requires a client certificate from the PKI's client CA and answers
    /// "client=SUBJECT verify=SUCCESS"; nginx answers 400 itself when none or a bad one is sent),
    /// and `client-certificate-h2` (the same over HTTP/2, with the protocol after the answer).
    public let trustCasePorts: [String: Int]

    /// Starts nginx with certificates issued by `pki` on free loopback ports and returns once it
    /// answers.
    /// - Throws: when nginx is not installed, or it does not start.
    public init(pki: TestPKI) async throws {
        let nginx = "/usr/sbin/nginx"
        guard FileManager.default.isExecutableFile(atPath: nginx) else {
            throw TestingError(
                "nginx is not installed: scripts/test.sh installs the Debian package 'nginx' (run it, or apt-get install nginx)"
            )
        }
        prefix = try ScratchFolder.make("nginx")
        let root = prefix.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        // nginx workers run as nobody: the folders must be traversable and the files readable.
        chmod(prefix.path, 0o755)
        chmod(root.path, 0o755)
        try Data(Self.largeFile).write(to: root.appendingPathComponent("large.bin"))
        try Data(Self.text.utf8).write(to: root.appendingPathComponent("text.txt"))
        try Data("hello nginx\n".utf8).write(to: root.appendingPathComponent("small.txt"))
        let leaf = try pki.leaf()
        let (certificate, key) = try leaf.write(to: prefix, name: "server")
        chmod(key, 0o644)
        // Basic users for /basic/ (nginx compares the raw bytes, so the UTF-8 password works).
        let htpasswd = prefix.appendingPathComponent("htpasswd")
        let users = Self.basicUsers.map { "\($0.key):{PLAIN}\($0.value)" }.sorted().joined(separator: "\n")
        try Data((users + "\n").utf8).write(to: htpasswd)
        chmod(htpasswd.path, 0o644)

        // The certificates of the trust cases, written next to the configuration.
        let stapled = try pki.leaf(commonName: "stapled.localhost")
        let revoked = try pki.leaf(commonName: "revoked.localhost")
        let cases: [(String, TestIssuedCertificate, Bool, Data?)] = [
            ("expired", try pki.expiredLeaf(), true, nil),
            ("wrong-host", try pki.wrongHostLeaf(), true, nil),
            ("untrusted-root", try pki.untrustedLeaf(), true, nil),
            ("self-signed", try pki.selfSignedLeaf(), true, nil),
            ("leaf-only", try pki.leaf(), false, nil),
            ("rsa", try pki.leaf(key: .rsa2048), true, nil),
            ("ocsp-good", stapled, true, try pki.ocspResponse(for: stapled)),
            ("ocsp-revoked", revoked, true, try pki.ocspResponse(for: revoked, answer: .revoked(at: pki.now - 3600))),
            ("client-certificate", try pki.leaf(), true, nil),
            ("client-certificate-h2", try pki.leaf(), true, nil),
        ]
        // The mutual-TLS case: nginx finishes every handshake and answers 400 itself when the
        // client certificate is missing or fails verification.
        let clientCAPath = prefix.appendingPathComponent("client-ca.pem")
        try Data(pki.clientCA.certificatePEM.utf8).write(to: clientCAPath)
        chmod(clientCAPath.path, 0o644)
        let verifyClient = "ssl_verify_client on; ssl_client_certificate \(clientCAPath.path); ssl_verify_depth 2;"
        let extraDirectives = ["client-certificate": verifyClient, "client-certificate-h2": verifyClient]
        let clientBody = "client=$ssl_client_s_dn verify=$ssl_client_verify"
        let bodies = ["client-certificate": clientBody, "client-certificate-h2": clientBody + " $server_protocol"]
        var caseFiles: [(String, String, String)] = []
        var stapleDirectives: [String: String] = [:]
        for (name, issued, withChain, staple) in cases {
            let (certificatePath, keyPath) = try issued.write(to: prefix, name: "case-\(name)")
            if !withChain { try Data(issued.certificatePEM.utf8).write(to: URL(fileURLWithPath: certificatePath)) }
            chmod(keyPath, 0o644)
            if let staple {
                let staplePath = prefix.appendingPathComponent("case-\(name).ocsp.der")
                try staple.write(to: staplePath)
                chmod(staplePath.path, 0o644)
                stapleDirectives[name] = "ssl_stapling on; ssl_stapling_file \(staplePath.path);"
            }
            caseFiles.append((name, certificatePath, keyPath))
        }
        var lastError: (any Error)? = nil
        for _ in 0..<5 {
            // Distinct ports: two servers on one port would silently share it (nginx picks the first).
            let ports = LoopbackPort.unused(count: 3 + caseFiles.count)
            let http = ports[0]
            let https = ports[1]
            let http2 = ports[2]
            let casePorts = Dictionary(uniqueKeysWithValues: zip(caseFiles.map(\.0), ports.dropFirst(3)))
            let caseServers = caseFiles.map { name, certificatePath, keyPath in
                """
                server {
                    listen 127.0.0.1:\(casePorts[name] ?? 0) ssl\(name.hasSuffix("-h2") ? " http2" : "");
                    ssl_certificate \(certificatePath);
                    ssl_certificate_key \(keyPath);
                    \(stapleDirectives[name] ?? "") \(extraDirectives[name] ?? "")
                    location / { default_type text/plain; return 200 "\(bodies[name] ?? name)"; }
                }
                """
            }.joined(separator: "\n")
            let configuration = """
                worker_processes 1;
                daemon off;
                pid \(prefix.path)/nginx.pid;
                error_log \(prefix.path)/error.log warn;
                events { worker_connections 256; }
                http {
                    default_type application/octet-stream;
                    types { text/plain txt; }
                    client_body_temp_path \(prefix.path)/body;
                    proxy_temp_path \(prefix.path)/proxy;
                    fastcgi_temp_path \(prefix.path)/fastcgi;
                    uwsgi_temp_path \(prefix.path)/uwsgi;
                    scgi_temp_path \(prefix.path)/scgi;
                    log_format reuse '$connection $connection_requests $request';
                    access_log \(prefix.path)/access.log reuse;
                    keepalive_requests 100000;
                    gzip on;
                    gzip_types text/plain;
                    gzip_min_length 0;
                    server {
                        listen 127.0.0.1:\(http);
                        listen 127.0.0.1:\(https) ssl;
                        listen 127.0.0.1:\(http2) ssl http2;
                        server_name localhost;
                        ssl_certificate \(certificate);
                        ssl_certificate_key \(key);
                        root \(root.path);
                        location = /echo {
                            default_type text/plain;
                            return 200 "auth=$http_authorization cookie=$http_cookie";
                        }
                        location = /protocol {
                            default_type text/plain;
                            return 200 "$server_protocol";
                        }
                        location = /redirect { return 302 /small.txt; }
                        location = /to-other-port { return 307 http://localhost:\(http)/echo; }
                        location = /to-https { return 307 https://localhost:\(https)/echo; }
                        location = /missing-page { return 404; }
                        # Any body, of any size, read and thrown away (upload benchmarks).
                        location = /upload { client_max_body_size 0; return 200 "uploaded\n"; }
                        # auth_basic runs in the access phase, after `return`: answer through a
                        # named location so the check happens.
                        location /basic/ {
                            auth_basic "\(Self.basicRealm)";
                            auth_basic_user_file \(htpasswd.path);
                            try_files /.none @basic_ok;
                        }
                        location = /basic/redirect-cross {
                            auth_basic "\(Self.basicRealm)";
                            auth_basic_user_file \(htpasswd.path);
                            try_files /.none @basic_redirect_cross;
                        }
                        location @basic_ok {
                            default_type text/plain;
                            return 200 "basic ok user=$remote_user";
                        }
                        location @basic_redirect_cross { return 302 http://127.0.0.1:\(http)/echo; }
                    }
                    \(caseServers)
                }
                """
            let configurationPath = prefix.appendingPathComponent("nginx.conf").path
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: configurationPath))
            let process = try ChildProcess(
                executable: nginx,
                arguments: ["-p", prefix.path, "-c", configurationPath],
                environment: [:],
                logPath: prefix.appendingPathComponent("stderr.log").path
            )
            if await LoopbackPort.waitUntilListening(
                [http, https, http2] + casePorts.values,
                by: process.pid,
                isAlive: { process.isRunning }
            ) {
                httpPort = http
                httpsPort = https
                http2Port = http2
                trustCasePorts = casePorts
                self.process = process
                return
            }
            process.stop()
            let log = readText(prefix.appendingPathComponent("stderr.log").path)
            lastError = TestingError("nginx did not start: \(log)")
        }
        throw lastError ?? TestingError("nginx did not start")
    }

    /// Stops nginx and removes its folder.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: prefix)
    }

    /// How many requests the access log holds so far (its lines), read without parsing them: a
    /// benchmark that asks before and after every run would otherwise parse a log of hundreds of
    /// thousands of lines each time.
    public var accessLogCount: Int {
        guard let data = FileManager.default.contents(atPath: prefix.appendingPathComponent("access.log").path)
        else { return 0 }
        return data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }

    /// (connection serial, request number on it, request line) per logged request.
    public var accessLog: [(connection: String, number: Int, request: String)] {
        let text = readText(prefix.appendingPathComponent("access.log").path)
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3, let number = Int(parts[1]) else { return nil }
            return (String(parts[0]), number, String(parts[2]))
        }
    }

    /// The access log's entries that `include` selects, once there are at least `count` of them
    /// (nginx writes an entry after its response), or as they are when `timeout` passes first.
    public func accessLog(
        atLeast count: Int,
        where include: (_ request: String) -> Bool = { _ in true },
        timeout: Duration = .seconds(10)
    ) async -> [(connection: String, number: Int, request: String)] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let log = accessLog.filter { include($0.request) }
            if log.count >= count || ContinuousClock.now >= deadline { return log }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
