import FoundationEssentials
import Glibc
import Sesame

/// The options of `sesame [fetch] URL`, with curl's names.
struct FetchOptions {
    var url: URL?
    var method: String?
    var headers: [(String, String)] = []
    var data: [UInt8]?
    var dataIsForm = false
    var formParts: [String] = []
    var json: [UInt8]?
    var charset: TextEncoding?
    var decodeCharset: String?
    var cookie: String?
    var cookieJar: String?
    var output: String?
    var atomicOutput = false
    var removeOnError = false
    var includeHead = false
    var verbose = false
    var silent = false
    var showError = false
    var followRedirects = false
    var maximumRedirects = 50
    var connectTimeout: Duration?
    /// `--expect100-timeout`: how long a body sent with `Expect: 100-continue` waits for the 100.
    var expectContinueTimeout: Duration?
    var maximumTime: Duration?
    var caFile: String?
    var caPath: String?
    var anchorFiles: [String] = []
    var anchorsOnly = false
    var requiresStapledOCSP = false
    var insecure = false
    var failOnHTTPError = false
    var user: UserOption?
    var bearerToken: String?
    var bearerRefreshCommand: String?
    /// The server schemes answered: the last of `--basic`, `--digest`, `--negotiate`, `--ntlm`,
    /// `--anyauth`.
    var serverSchemes = SchemeChoice.passwords
    /// `--spnego-ntlm`: SPNEGO may fall back to NTLM through an installed GSSAPI mechanism.
    var spnegoNTLM = false
    /// `--delegation`: whether the Kerberos ticket is forwarded.
    var delegation = NegotiateOptions.Delegation.none
    var usesNetrc = false
    var netrcFile: String?
    var credentialStore: String?
    var saveCredentials = false
    var pinnedCertificateFiles: [String] = []
    var pinnedPublicKeys: [String] = []
    var crlFiles: [String] = []
    var certificatePolicies: [String] = []
    var certificatePolicySwitches: Set<String> = []
    var validatesDomain = true
    var pinningMode: SecurityPolicy.PinningMode?
    var clientCertificate: String?
    var certificateType: String?
    var keyFile: String?
    var keyPassword: String?
    var proxy: String?
    var proxyUser: UserOption?
    /// The proxy schemes answered (curl's default: the password schemes; nil: every scheme).
    var proxyMethods: Set<AuthenticationMethod>? = [.httpBasic, .httpDigest]
    var noProxy: String?
    var httpVersion: HTTPVersionPreference = .http2

    static let arguments = Arguments(
        valued: ([
            "-X", "--request", "-H", "--header", "-d", "--data", "--data-binary", "--data-raw", "-o", "--output",
            "--max-redirs", "--connect-timeout", "--expect100-timeout", "-m", "--max-time", "--cacert", "--capath",
            "--url", "-u", "--user", "--oauth2-bearer", "--oauth2-refresh", "--delegation",
            "--netrc-file", "--credential-store", "--pin-cert", "--pinning-mode", "--pinnedpubkey", "--crl",
            "--crlfile", "--anchors", "-E", "--cert", "--cert-type", "--key", "--pass", "-x", "--proxy", "-U",
            "--proxy-user", "--noproxy", "--data-urlencode", "-F", "--form", "--json", "--charset", "--decode-charset",
            "-b", "--cookie", "-c", "--cookie-jar",
        ] as Set<String>).union(CertificatePolicyOptions.valued),
        switches: ([
            "-i", "--include", "-v", "--verbose", "-s", "--silent", "-S", "--show-error", "-L", "--location", "-k",
            "--insecure", "-f", "--fail", "--basic", "--digest", "--anyauth", "-n", "--netrc", "--save-credentials",
            "--no-validate-domain", "--anchors-only", "--cert-status", "--proxy-basic", "--proxy-digest",
            "--proxy-anyauth", "--negotiate", "--proxy-negotiate", "--spnego-ntlm", "--ntlm", "--proxy-ntlm",
            "--atomic", "--remove-on-error",
            "--http1.1",
            "--http2", "--http2-prior-knowledge",
        ] as Set<String>).union(CertificatePolicyOptions.switches)
    )

    /// Parses the arguments after `fetch` (or after the program name).
    static func parse(_ arguments: [String]) throws -> FetchOptions {
        var options = FetchOptions()
        var dataParts: [DataPiece] = []
        var jsonParts: [[UInt8]] = []
        for item in try Self.arguments.parse(arguments) {
            switch item {
            case .positional(let text), .option("--url", let text?):
                guard options.url == nil else {
                    throw Arguments.UsageError(description: "only one URL may be given (got '\(text)' too)")
                }
                options.url = try url(text)
            case .option(let name, let value?):
                switch name {
                case "-X", "--request": options.method = value
                case "-H", "--header": options.headers.append(try header(value))
                case "-d", "--data":
                    dataParts.append(.bytes(try dataArgument(value, binary: false)))
                    options.dataIsForm = true
                case "--data-raw":
                    dataParts.append(.bytes(Array(value.utf8)))
                    options.dataIsForm = true
                case "--data-binary":
                    dataParts.append(.bytes(try dataArgument(value, binary: true)))
                    options.dataIsForm = true
                case "--data-urlencode":
                    dataParts.append(.urlencode(value))
                    options.dataIsForm = true
                case "-F", "--form": options.formParts.append(value)
                case "--json": jsonParts.append(try dataArgument(value, binary: true))
                case "--charset":
                    do {
                        options.charset = try TextEncoding(ianaName: value)
                    } catch {
                        throw Arguments.UsageError(description: "--charset: \(error)")
                    }
                case "--decode-charset": options.decodeCharset = value
                case "-b", "--cookie": options.cookie = value
                case "-c", "--cookie-jar": options.cookieJar = value
                case "-o", "--output": options.output = value
                case "--max-redirs": options.maximumRedirects = try integer(value, name)
                case "--connect-timeout": options.connectTimeout = try seconds(value, name)
                case "--expect100-timeout": options.expectContinueTimeout = try seconds(value, name)
                case "-m", "--max-time": options.maximumTime = try seconds(value, name)
                case "--cacert": options.caFile = value
                case "--capath": options.caPath = value
                case "--anchors": options.anchorFiles.append(value)
                case "-E", "--cert": options.clientCertificate = value
                case "--cert-type":
                    guard ["P12", "PEM"].contains(value.uppercased()) else {
                        throw Arguments.UsageError(description: "--cert-type is P12 or PEM, not '\(value)'")
                    }
                    options.certificateType = value.uppercased()
                case "--key": options.keyFile = value
                case "--pass": options.keyPassword = value
                case "-x", "--proxy": options.proxy = value
                case "-U", "--proxy-user": options.proxyUser = try UserOption(value, option: "-U")
                case "--noproxy": options.noProxy = value
                case "-u", "--user": options.user = try UserOption(value)
                case "--delegation":
                    switch value.lowercased() {
                    case "none": options.delegation = .none
                    case "policy": options.delegation = .policy
                    case "always": options.delegation = .always
                    default:
                        throw Arguments.UsageError(
                            description: "--delegation takes none, policy or always, not '\(value)'"
                        )
                    }
                case "--oauth2-bearer": options.bearerToken = value
                case "--oauth2-refresh": options.bearerRefreshCommand = value
                case "--netrc-file":
                    options.netrcFile = value
                    options.usesNetrc = true
                case "--credential-store": options.credentialStore = value
                case "--pin-cert": options.pinnedCertificateFiles.append(value)
                case "--pinnedpubkey":
                    // curl's syntax: sha256//BASE64, several joined with ';'.
                    options.pinnedPublicKeys += value.split(separator: ";").map {
                        $0.trimmingWhitespace()
                    }
                case "--crl", "--crlfile": options.crlFiles.append(value)
                case "--policy": options.certificatePolicies.append(value)
                case "--pinning-mode":
                    switch value.lowercased() {
                    case "none": options.pinningMode = SecurityPolicy.PinningMode.none
                    case "certificate": options.pinningMode = .certificate
                    case "publickey", "public-key": options.pinningMode = .publicKey
                    default:
                        throw Arguments.UsageError(
                            description: "--pinning-mode is none, certificate or publickey, not '\(value)'"
                        )
                    }
                default: throw Arguments.UsageError(description: "unknown option \(name)")
                }
            case .option(let name, nil):
                switch name {
                case "-i", "--include": options.includeHead = true
                case "--atomic": options.atomicOutput = true
                case "--remove-on-error": options.removeOnError = true
                case "-v", "--verbose": options.verbose = true
                case "-s", "--silent": options.silent = true
                case "-S", "--show-error": options.showError = true
                case "-L", "--location": options.followRedirects = true
                case "-k", "--insecure": options.insecure = true
                case "--http1.1": options.httpVersion = .http1_1
                case "--http2": options.httpVersion = .http2
                case "--http2-prior-knowledge": options.httpVersion = .http2PriorKnowledge
                case "-f", "--fail": options.failOnHTTPError = true
                case "--basic": options.serverSchemes = .basic
                case "--digest": options.serverSchemes = .digest
                case "--negotiate": options.serverSchemes = .negotiate
                case "--ntlm": options.serverSchemes = .ntlm
                case "--anyauth": options.serverSchemes = .any
                case "-n", "--netrc": options.usesNetrc = true
                case "--save-credentials": options.saveCredentials = true
                case "--no-validate-domain": options.validatesDomain = false
                case "--explicit-policy", "--inhibit-policy-mapping", "--inhibit-any-policy":
                    options.certificatePolicySwitches.insert(name)
                case "--anchors-only": options.anchorsOnly = true
                case "--cert-status": options.requiresStapledOCSP = true
                case "--proxy-basic": options.proxyMethods = [.httpBasic]
                case "--proxy-digest": options.proxyMethods = [.httpDigest]
                case "--proxy-negotiate": options.proxyMethods = [.negotiate]
                case "--proxy-ntlm": options.proxyMethods = [.ntlm]
                case "--spnego-ntlm": options.spnegoNTLM = true
                case "--proxy-anyauth": options.proxyMethods = nil
                default: throw Arguments.UsageError(description: "unknown option \(name)")
                }
            }
        }
        if !dataParts.isEmpty {
            // Like curl: several -d pieces are joined with '&'.
            let encoding = options.charset ?? .utf8
            let pieces = try dataParts.map { try $0.resolved(encoding) }
            options.data = Array(pieces.joined(separator: [UInt8(ascii: "&")]))
        }
        if !jsonParts.isEmpty { options.json = Array(jsonParts.joined()) }
        let bodies = [options.data != nil, !options.formParts.isEmpty, options.json != nil].filter { $0 }.count
        if bodies > 1 {
            throw Arguments.UsageError(description: "choose one of -d/--data*, -F/--form and --json for the body")
        }
        guard options.url != nil else { throw Arguments.UsageError(description: "no URL given; see sesame --help") }
        if options.anchorsOnly && options.anchorFiles.isEmpty && options.caFile == nil && options.caPath == nil {
            throw Arguments.UsageError(description: "--anchors-only needs --anchors FILE (or --cacert / --capath)")
        }
        if options.requiresStapledOCSP && options.insecure {
            throw Arguments.UsageError(
                description: "--cert-status checks the server's certificate; --insecure does not"
            )
        }
        if (options.keyFile != nil || options.certificateType != nil) && options.clientCertificate == nil {
            throw Arguments.UsageError(description: "--key and --cert-type need -E/--cert FILE")
        }
        if options.user?.isTicketCache == true && options.serverSchemes != .negotiate && options.serverSchemes != .any {
            throw Arguments.UsageError(description: "-u : (the Kerberos ticket cache) needs --negotiate or --anyauth")
        }
        if options.proxyUser?.isTicketCache == true && options.proxyMethods?.contains(.negotiate) == false {
            throw Arguments.UsageError(
                description: "-U : (the Kerberos ticket cache) needs --proxy-negotiate or --proxy-anyauth"
            )
        }
        if options.saveCredentials && (options.user == nil || options.user?.isTicketCache == true) {
            throw Arguments.UsageError(description: "--save-credentials needs -u USER[:PASSWORD]")
        }
        return options
    }

    private static func url(_ text: String) throws -> URL {
        // Like curl, a URL without a scheme means http.
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host != nil
        else { throw Arguments.UsageError(description: "'\(text)' is not an http or https URL") }
        return url
    }

    private static func header(_ text: String) throws -> (String, String) {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw Arguments.UsageError(description: "header '\(text)' is not 'Name: value'")
        }
        return (String(text[..<colon]), text[text.index(after: colon)...].trimmingWhitespace())
    }

    /// `@file` reads a file (for -d, without CR and LF, as curl does); anything else is the data itself.
    private static func dataArgument(_ value: String, binary: Bool) throws -> [UInt8] {
        guard value.hasPrefix("@") else { return Array(value.utf8) }
        let bytes = try dataFile(String(value.dropFirst()))
        return binary ? bytes : bytes.filter { $0 != 0x0D && $0 != 0x0A }
    }

    /// A data file (`-` is standard input), as ``UserFile`` reads files: regular files only,
    /// within curl's limit for files read whole.
    static func dataFile(_ path: String) throws -> [UInt8] {
        do {
            return path == "-"
                ? try UserFile.readStandardInput(as: .requestData) : try UserFile.read(path, as: .requestData)
        } catch {
            throw Arguments.UsageError(description: "cannot read data file: \(error.detail)")
        }
    }

    private static func integer(_ value: String, _ name: String) throws -> Int {
        guard let number = Int(value), number >= -1 else {
            throw Arguments.UsageError(description: "\(name) needs a whole number, not '\(value)'")
        }
        return number
    }

    private static func seconds(_ value: String, _ name: String) throws -> Duration {
        guard let number = Double(value), number > 0, number.isFinite else {
            throw Arguments.UsageError(description: "\(name) needs a positive number of seconds, not '\(value)'")
        }
        return .milliseconds(Int64(number * 1000))
    }
}

/// One `-d`-family argument, in order: bytes as they are, or `--data-urlencode`'s
/// `[name][=|@]content` to percent-encode in the `--charset` encoding.
enum DataPiece {
    case bytes([UInt8])
    case urlencode(String)

    func resolved(_ encoding: TextEncoding) throws -> [UInt8] {
        switch self {
        case .bytes(let bytes): return bytes
        case .urlencode(let argument): return Array(try Self.urlencode(argument, encoding).utf8)
        }
    }

    /// curl's forms: `content`, `=content`, `name=content`, `@file`, `name@file`.
    static func urlencode(_ argument: String, _ encoding: TextEncoding) throws -> String {
        let equals = argument.firstIndex(of: "=")
        let at = argument.firstIndex(of: "@")
        var name: String?
        var content: String
        if let equals, at.map({ equals < $0 }) ?? true {
            name = String(argument[..<equals])
            content = String(argument[argument.index(after: equals)...])
        } else if let at {
            name = String(argument[..<at])
            let path = String(argument[argument.index(after: at)...])
            content = String(decoding: try FetchOptions.dataFile(path), as: UTF8.self)
        } else {
            content = argument
        }
        let escaped: String
        do {
            escaped = try encoding.percentEncoded(content)
        } catch {
            throw Arguments.UsageError(description: "--data-urlencode: \(error)")
        }
        guard let name, !name.isEmpty else { return escaped }
        return name + "=" + escaped
    }
}

/// Which server challenges a fetch answers (curl's `--basic`, `--digest`, `--negotiate`, `--ntlm`,
/// `--anyauth`).
enum SchemeChoice: Equatable {
    /// Digest and Basic, the strongest first: curl's default, Negotiate and NTLM only when asked.
    case passwords
    case basic
    case digest
    case negotiate
    case ntlm
    /// Every scheme Sesame answers.
    case any

    /// The configuration's ``SessionConfiguration/authenticationMethods``.
    var methods: Set<AuthenticationMethod>? {
        switch self {
        case .passwords: [.httpBasic, .httpDigest]
        case .basic: [.httpBasic]
        case .digest: [.httpDigest]
        case .negotiate: [.negotiate]
        case .ntlm: [.ntlm]
        case .any: nil
        }
    }
}
