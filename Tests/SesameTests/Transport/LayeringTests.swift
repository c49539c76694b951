import Foundation
import Testing

/// DESIGN section 1: no layer imports one above it. The transport names no type of the session
/// or challenge layers; what an exchange needs comes down as transport values.
@Suite struct LayeringTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Sesame")

    static func swiftFiles(in folder: String) throws -> [URL] {
        let root = sources.appendingPathComponent(folder)
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    }

    /// The names of the top-level types a folder declares (nested ones, such as a `Settings`
    /// inside a type, are named through their outer type).
    static func declaredTypes(in folder: String) throws -> Set<String> {
        let declaration = try Regex(
            #"(?m)^(?:public |package |private |fileprivate |final |indirect )*(?:class|struct|enum|protocol|actor) ([A-Z][A-Za-z0-9]*)"#
        )
        var names = Set<String>()
        for file in try swiftFiles(in: folder) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: declaration) {
                if let name = match.output[1].substring { names.insert(String(name)) }
            }
        }
        return names
    }

    @Test func theTransportNamesNoSessionOrChallengeType() throws {
        let above = try Self.declaredTypes(in: "Session").union(Self.declaredTypes(in: "Challenge"))
        #expect(above.contains("SessionTask") && above.contains("SessionConfiguration"), "the scan found the types")
        var found: [String] = []
        for file in try Self.swiftFiles(in: "Transport") {
            let text = try String(contentsOf: file, encoding: .utf8)
            let words = Set(text.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
            for name in above.intersection(words) { found.append("\(file.lastPathComponent): \(name)") }
        }
        #expect(found.isEmpty, "\(found.sorted())")
    }

    /// The event loop runs descriptors, timers and posted work; what waits on reads belongs to
    /// the connections.
    @Test func theEventLoopKnowsNothingOfReadsOrConnections() throws {
        let loop = Self.sources.appendingPathComponent("Transport/Reactor/EventLoop.swift")
        let words = Set(
            try String(contentsOf: loop, encoding: .utf8).split { !($0.isLetter || $0.isNumber) }.map(String.init)
        )
        let known = ["ReadContinuation", "Connection", "readBegan", "readEnded", "resumeRead"]
        #expect(words.intersection(known).isEmpty, "\(words.intersection(known).sorted())")
    }

    /// Only the event loop's thread waits for a socket: no other Sesame code polls one (a task's
    /// thread belongs to Swift's pool, which a library must never block).
    @Test func nothingButTheEventLoopWaitsForASocket() throws {
        var found: [String] = []
        for file in try Self.swiftFiles(in: "") where file.lastPathComponent != "EventLoop.swift" {
            let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            for call in ["ppoll(", " poll(", "select(", "epoll_wait(", "_wait_readable("] where code.contains(call) {
                found.append("\(file.lastPathComponent): \(call)")
            }
        }
        #expect(found.isEmpty, "\(found.sorted())")
    }

    /// OpenSSL stays inside the TLS engine: a connection moves bytes and asks for decisions, and
    /// never calls `SSL_*` itself (so another owner, such as a tunnel, can drive the same engine).
    @Test func onlyTheTLSFolderTouchesOpenSSLInTheTransport() throws {
        var found: [String] = []
        for folder in ["Transport/Connection", "Transport/HTTP1", "Transport/Pool", "Transport/Reactor"] {
            for file in try Self.swiftFiles(in: folder) {
                let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                    .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
                if code.contains("import COpenSSL") || code.contains("SSL_") || code.contains("BIO_") {
                    found.append(file.lastPathComponent)
                }
            }
        }
        #expect(found.isEmpty, "\(found.sorted())")
    }

    /// Issue 46: a program that imports only Sesame loads no libFoundation and no ICU, so the
    /// module imports FoundationEssentials (and Glibc, Dispatch) only. scripts/footprint-check.sh
    /// checks the linked program with ldd.
    @Test func noSesameFileImportsFoundation() throws {
        let found = try Self.swiftFiles(in: "").filter { file in
            let text = try String(contentsOf: file, encoding: .utf8)
            return text.split(separator: "\n").contains {
                $0 == "import Foundation" || $0 == "import FoundationNetworking"
                    || $0 == "import FoundationInternationalization"
            }
        }
        #expect(found.map(\.lastPathComponent).isEmpty)
    }

    /// Issue 45: one type's state in one place. No transport type is declared or extended in more
    /// than three files, nor holds more than twenty stored properties.
    @Test func transportTypesStayInFewFilesAndHoldFewProperties() throws {
        let opener = try Regex(
            #"^(?:public |package |private |fileprivate |final |indirect )*(?:class|struct|enum|actor|extension) ([A-Z][A-Za-z0-9]*)"#
        )
        let stored = try Regex(
            #"^    (?:public |package |private\(set\) |private |fileprivate |internal |nonisolated |weak |unowned |lazy )*(?:let|var) [a-zA-Z_][A-Za-z0-9_]*"#
        )
        var files: [String: Set<String>] = [:]
        var properties: [String: Int] = [:]
        for file in try Self.swiftFiles(in: "Transport") {
            var current: (name: String, counts: Bool)?
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                if let match = line.firstMatch(of: opener), let name = match.output[1].substring {
                    files[String(name), default: []].insert(file.lastPathComponent)
                    current = (String(name), !line.contains("enum ") && !line.contains("extension "))
                    continue
                }
                if line.first == "}" { current = nil }
                guard let type = current, type.counts, line.firstMatch(of: stored) != nil else { continue }
                // A computed property (`var x: T {`) stores nothing; `= ... {` starts a closure value.
                let brace = line.firstIndex(of: "{")
                let computed = brace.map { brace in line.firstIndex(of: "=").map { $0 > brace } ?? true } ?? false
                if !computed { properties[type.name, default: 0] += 1 }
            }
        }
        let spread = files.filter { $0.value.count > 3 }.map { "\($0.key): \($0.value.sorted())" }
        #expect(spread.isEmpty, "\(spread.sorted())")
        let heavy = properties.filter { $0.value > 20 }.map { "\($0.key): \($0.value)" }
        #expect(heavy.isEmpty, "\(heavy.sorted())")
        #expect(properties["Connection", default: 0] > 5, "the scan found Connection's properties")
    }

    /// Issue 45: no function in the session or transport layers is over 80 lines.
    @Test func noSessionOrTransportFunctionIsOver80Lines() throws {
        let header = try Regex(#"^\s*(?:@[A-Za-z]+ )*(?:[a-z]+ )*(?:func |init\(|init<|init\?\()"#)
        var long: [String] = []
        var measured = 0
        for folder in ["Session", "Transport"] {
            for file in try Self.swiftFiles(in: folder) {
                let lines = try String(contentsOf: file, encoding: .utf8).split(
                    separator: "\n",
                    omittingEmptySubsequences: false
                )
                var index = 0
                while index < lines.count {
                    defer { index += 1 }
                    let line = lines[index]
                    guard line.firstMatch(of: header) != nil, !line.contains("//") || line.contains("{") else {
                        continue
                    }
                    // From the header to the brace that closes the body.
                    var depth = 0
                    var opened = false
                    var end = index
                    while end < lines.count {
                        for character in lines[end] {
                            if character == "{" {
                                depth += 1
                                opened = true
                            } else if character == "}" {
                                depth -= 1
                            }
                        }
                        if opened && depth <= 0 { break }
                        if !opened && end > index + 12 { break }  // a requirement without a body
                        end += 1
                    }
                    guard opened else { continue }
                    measured += 1
                    let length = end - index + 1
                    if length > 80 { long.append("\(file.lastPathComponent):\(index + 1): \(length)") }
                }
            }
        }
        #expect(measured > 100, "the scan found the functions")
        #expect(long.isEmpty, "\(long.sorted())")
    }
}
