import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// The request count the soak test is asked for, if any.
let soakRequestCount = ProcessInfo.processInfo.environment["SESAME_SOAK_REQUESTS"].flatMap(Int.init)

/// Many requests against servers that misbehave in every way a task must survive: connections
/// reset before an answer or closed mid-body, answers that never come, 401s and 407s with right
/// and wrong credentials, redirects within and across origins. Afterwards nothing is left behind:
/// no descriptor, no connection beyond the pool's limit, no memory growing with the count.
///
/// It measures the whole process (its descriptors, its memory), so it runs in a process of its
/// own: `SESAME_SOAK_REQUESTS` turns it on and sets the count, and scripts/test.sh runs it that
/// way after the other tests (20,000 requests, plain and under each sanitizer).
@Suite(
    .enabled(
        if: soakRequestCount != nil,
        "runs alone, in a process of its own: SESAME_SOAK_REQUESTS=20000 swift test --filter SesameSoakTests"
    )
)
struct FaultSoakTests {
    static let requestCount = soakRequestCount
    static let concurrency = 16
    static let connectionLimit = 4

    /// What one request should end in.
    enum Outcome: Hashable, CustomStringConvertible {
        case status(Int)
        case error(SesameError.Code)

        var description: String {
            switch self {
            case .status(let status): "status \(status)"
            case .error(let code): "error \(code)"
            }
        }
    }

    /// The mix, by request number modulo its length: (path or kind, expected outcome).
    /// `SESAME_SOAK_KINDS` (comma-separated) keeps only those kinds, to find which one costs.
    static let mix: [(kind: String, expected: Set<Outcome>)] = {
        guard let kinds = ProcessInfo.processInfo.environment["SESAME_SOAK_KINDS"]?.split(separator: ",") else {
            return fullMix
        }
        return fullMix.filter { kinds.contains(Substring($0.kind)) }
    }()

    static let fullMix: [(kind: String, expected: Set<Outcome>)] = [
        ("/ok", [.status(200)]),
        ("/reset", [.error(.connectionClosed), .error(.connectionReset)]),
        ("/ok", [.status(200)]),
        ("/midbody", [.error(.protocolError), .error(.connectionClosed), .error(.connectionReset)]),
        ("/stall", [.error(.timeout)]),
        ("/basic-good", [.status(200)]),
        ("/basic-bad", [.status(401)]),
        ("/redirect", [.status(200)]),
        ("/redirect-cross", [.status(200)]),
        ("proxy-good", [.status(200)]),
        ("proxy-bad", [.status(407)]),
        ("/chunked", [.status(200)]),
        ("/ok", [.status(200)]),
        ("/basic-good", [.status(200)]),
    ]

    /// Live heap bytes where a sanitizer runtime counts them (its quarantine would otherwise look
    /// like growth), else the resident set (`/proc/self/statm`).
    static func memoryBytes() -> Int {
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__sanitizer_get_current_allocated_bytes") {
            let count = unsafeBitCast(symbol, to: (@convention(c) () -> Int).self)
            return count()
        }
        let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// What each open descriptor is, with the TCP ports of sockets (for a failure message).
    static func describeDescriptors() -> [String] {
        var sockets: [String: String] = [:]
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9 else { continue }
                let port = { (field: Substring) in field.split(separator: ":").last.flatMap { Int($0, radix: 16) } ?? 0
                }
                sockets[String(fields[9])] = "tcp \(port(fields[1])) -> \(port(fields[2])) state \(fields[3])"
            }
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.map { name in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) ?? "?"
            if target.hasPrefix("socket:["), let inode = target.dropFirst(8).split(separator: "]").first,
                let socket = sockets[String(inode)]
            {
                return "\(name): \(socket)"
            }
            return "\(name): \(target)"
        }
    }

    static func server(
        _ handler: @escaping @Sendable (LocalServer.Request) -> LocalServer.Response
    ) throws -> LocalServer {
        var configuration = LocalServer.Configuration(identity: nil)
        configuration.keepsRecords = false
        configuration.handler = handler
        return try LocalServer(configuration)
    }

    /// The descriptors open once those of connections being closed are gone (up to 20 s).
    static func settledDescriptors(atMost limit: Int) async throws -> Int {
        _ = await eventually(within: .seconds(20)) { openDescriptors() <= limit }
        return openDescriptors()
    }

    @Test func twentyThousandRequestsThroughFaultsLeaveNothingBehind() async throws {
        let requestCount = try #require(Self.requestCount)
        let other = try Self.server { _ in .text("other") }
        defer { other.shutdown() }
        let gate = BasicAuthGate(realm: "soak", users: ["ada": "s3cret"])
        let origin = try Self.server { request in
            let path = request.target.split(separator: "?").first.map(String.init) ?? request.target
            switch path {
            case "/ok": return .text("ok")
            case "/reset": return .closeConnection
            case "/midbody": return .raw("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly this", thenClose: true)
            case "/stall": return .stall
            case "/basic-good", "/basic-bad": return gate.check(request) ?? .text("welcome")
            case "/redirect": return .redirect(302, to: "/ok")
            case "/redirect-cross": return .redirect(307, to: "\(other.baseURL)/landing")
            case "/chunked": return .chunked([Array("one ".utf8), Array("two".utf8)])
            default: return .text("no", status: 404)
            }
        }
        defer { origin.shutdown() }
        let proxy = try Self.server { request in
            request.headers["proxy-authorization"] == "Basic \(Data("proxy:right".utf8).base64EncodedString())"
                ? .text("proxied \(request.target)")
                : .text("who?", status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"proxy\"")])
        }
        defer { proxy.shutdown() }

        func session(proxyPassword: String? = nil) -> Session {
            var configuration = SessionConfiguration.default
            configuration.credentialStorage = CredentialStorage()
            configuration.maximumConnectionsPerHost = Self.connectionLimit
            configuration.requestTimeout = .seconds(10)
            configuration.cookieStore = CookieStore()
            configuration.proxy =
                proxyPassword.map { .init(proxy: "http://proxy:\($0)@localhost:\(proxy.port)") } ?? .none
            return Session(configuration: configuration)
        }
        let direct = session()
        let goodProxy = session(proxyPassword: "right")
        let badProxy = session(proxyPassword: "wrong")
        let sessions = [direct, goodProxy, badProxy]

        // The baseline: servers listening, sessions and their event loop made (one round of the
        // mix), every connection closed again.
        func warmUp() async throws {
            for number in 0..<Self.mix.count { _ = await run(number) }
            for session in sessions { session.closeIdleConnections() }
            try await Task.sleep(for: .milliseconds(200))
        }

        func run(_ number: Int) async -> Outcome {
            let (kind, _) = Self.mix[number % Self.mix.count]
            var request: HTTPRequest
            let session: Session
            switch kind {
            case "proxy-good", "proxy-bad":
                session = kind == "proxy-good" ? goodProxy : badProxy
                request = HTTPRequest(url: URL(string: "http://origin.invalid/item/\(number)")!)  // safe: literal form
            case "/basic-good", "/basic-bad":
                session = direct
                let password = kind == "/basic-good" ? "s3cret" : "wrong"
                request = HTTPRequest(
                    url: URL(string: "http://ada:\(password)@localhost:\(origin.port)\(kind)?n=\(number)")!
                )  // safe: literal form
            default:
                session = direct
                request = HTTPRequest(url: URL(string: "\(origin.baseURL)\(kind)?n=\(number)")!)  // safe: literal form
            }
            if kind == "/stall" { request.timeout = .milliseconds(50) }
            do {
                let (_, response) = try await session.data(for: request)
                return .status(response.status)
            } catch let error as SesameError {
                return .error(error.code)
            } catch {
                return .error(.ioError)
            }
        }

        try await warmUp()
        let baselineDescriptors = Self.openDescriptors()
        let baselineList = Self.describeDescriptors()
        var unexpected: [String: Int] = [:]
        var heapAfterFirstQuarter = 0
        var completed = 0
        await withTaskGroup(of: (Int, Outcome).self) { group in
            var next = 0
            while next < Self.concurrency {
                let number = next
                group.addTask { (number, await run(number)) }
                next += 1
            }
            while let (number, outcome) = await group.next() {
                completed += 1
                let (kind, expected) = Self.mix[number % Self.mix.count]
                if !expected.contains(outcome) { unexpected["\(kind) → \(outcome)", default: 0] += 1 }
                if completed == requestCount / 4 { heapAfterFirstQuarter = Self.memoryBytes() }
                if next < requestCount {
                    let number = next
                    group.addTask { (number, await run(number)) }
                    next += 1
                }
            }
        }
        let heapAtEnd = Self.memoryBytes()
        if ProcessInfo.processInfo.environment["SESAME_SOAK_PROFILE"] != nil,
            let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__sanitizer_print_memory_profile")
        {
            unsafeBitCast(symbol, to: (@convention(c) (Int, Int) -> Void).self)(90, 12)
        }
        #expect(completed == requestCount)
        #expect(unexpected.isEmpty, "outcomes other than expected: \(unexpected)")

        // The pools: nothing leased or waiting, and no origin above its limit.
        for session in sessions {
            let totals = session.pool.totals
            #expect(totals.leased == 0 && totals.opening == 0 && totals.waiting == 0, "\(totals)")
            #expect(totals.largestIdle <= Self.connectionLimit, "\(totals)")
        }
        // Memory: what the last three quarters added is not what the requests cost.
        let growth = heapAtEnd - heapAfterFirstQuarter
        #expect(
            growth < 8 << 20,
            "memory grew \(growth) bytes over the last three quarters (\(heapAfterFirstQuarter) → \(heapAtEnd))"
        )
        print(
            "soak: \(completed) requests; memory after the first quarter \(heapAfterFirstQuarter) B, at the end \(heapAtEnd) B"
        )

        // Descriptors: once the sessions close their idle connections and the servers see them go,
        // the process holds what it held before (the servers' own listeners aside).
        for session in sessions { session.closeIdleConnections() }
        let descriptors = try await Self.settledDescriptors(atMost: baselineDescriptors)
        #expect(
            descriptors <= baselineDescriptors,
            "\(descriptors) descriptors open, \(baselineDescriptors) before: \(Self.describeDescriptors()), before: \(baselineList)"
        )
    }
}
