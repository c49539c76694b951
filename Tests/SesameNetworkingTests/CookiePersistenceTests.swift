import SesameNetworking
import SesameTesting
import Testing

/// `HTTPCookieStorage.shared` keeps cookies across launches, as on Apple's platforms, in the file
/// FoundationNetworking keeps them in (each check runs in processes of its own: the shared
/// storage reads its file once per process).
@Suite(.serialized) struct CookiePersistenceTests {
    /// `$XDG_DATA_HOME/<program>/.cookies.shared` for a process with `XDG_DATA_HOME` = `data`.
    static func sharedFile(in data: String) -> String {
        var program = (Bundle.main.bundlePath as NSString).lastPathComponent
        if let dot = program.lastIndex(of: "."), dot != program.startIndex { program = String(program[..<dot]) }
        return "\(data)/\(program)/.cookies.shared"
    }

    @Test func aCookieWithAnExpiryOutlivesTheProcessAndASessionCookieDoesNot() async throws {
        let data = try ScratchFolder.make("cookies-data").path
        await #expect(processExitsWith: .success) { [data = data as String] in
            setenv("XDG_DATA_HOME", data, 1)
            let storage = HTTPCookieStorage.shared
            storage.setCookie(cookie("kept", domain: ".example.org", expires: Date(timeIntervalSinceNow: 3600)))
            storage.setCookie(cookie("session", domain: "example.org", expires: nil))
            storage.setCookie(cookie("gone", domain: "example.org", expires: Date(timeIntervalSinceNow: 3600)))
            storage.deleteCookie(cookie("gone", domain: "example.org", expires: nil))
            exit(storage.cookies?.count == 2 ? 0 : 1)
        }
        let path = Self.sharedFile(in: data)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: (path as NSString).deletingLastPathComponent)
        #expect((folder[.posixPermissions] as? Int) == 0o700)

        await #expect(processExitsWith: .success) { [data = data as String] in
            setenv("XDG_DATA_HOME", data, 1)
            let cookies = HTTPCookieStorage.shared.cookies ?? []
            guard cookies.map(\.name) == ["kept"], let kept = cookies.first else { exit(1) }
            // As it was set: a domain cookie, its expiry to the second.
            guard kept.domain == ".example.org", kept.value == "v-kept",
                let expires = kept.expiresDate, expires.timeIntervalSinceNow > 3500
            else { exit(2) }
            let sent = HTTPCookieStorage.shared.cookies(for: URL(string: "https://www.example.org/")!) ?? []
            exit(sent.map(\.name) == ["kept"] ? 0 : 3)
        }
    }

    @Test func foundationNetworkingReadsWhatSesameWroteAndTheOtherWayRound() async throws {
        let data = try ScratchFolder.make("cookies-interop").path
        await #expect(processExitsWith: .success) { [data = data as String] in
            setenv("XDG_DATA_HOME", data, 1)
            HTTPCookieStorage.shared.setCookie(
                cookie("fromSesame", domain: "api.example.org", expires: Date(timeIntervalSinceNow: 3600), secure: true)
            )
            exit(0)
        }
        await #expect(processExitsWith: .success) { [data = data as String] in
            setenv("XDG_DATA_HOME", data, 1)
            let foundation = FoundationNetworking.HTTPCookieStorage.shared
            guard let read = foundation.cookies?.first(where: { $0.name == "fromSesame" }), read.isSecure,
                read.domain == "api.example.org", read.value == "v-fromSesame"
            else { exit(1) }
            foundation.setCookie(
                cookie("fromFoundation", domain: ".example.org", expires: Date(timeIntervalSinceNow: 60))
            )
            exit(0)
        }
        await #expect(processExitsWith: .success) { [data = data as String] in
            setenv("XDG_DATA_HOME", data, 1)
            let names = Set((HTTPCookieStorage.shared.cookies ?? []).map(\.name))
            exit(names == ["fromSesame", "fromFoundation"] ? 0 : 1)
        }
    }

    @Test func cookiesResponsesSetAreKeptEvenWhenTheProcessExitsAtOnceAndWritersKeepEachOthersCookies() async throws {
        let httpbin = try await HttpbinServer()
        defer { httpbin.stop() }
        let data = try ScratchFolder.make("cookies-writers").path
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    await #expect(processExitsWith: .success) {
                        [data = data as String, base = httpbin.baseURL as String, writer = writer as Int] in
                        setenv("XDG_DATA_HOME", data, 1)
                        for index in 0..<5 {
                            let setCookie = "w\(writer)-\(index)=1; Max-Age=3600"
                            var parts = URLComponents(string: base + "/response-headers")!
                            parts.queryItems = [URLQueryItem(name: "Set-Cookie", value: setCookie)]
                            guard let (_, response) = try? await URLSession.shared.data(from: parts.url!),
                                (response as? HTTPURLResponse)?.statusCode == 200
                            else { exit(1) }
                        }
                        // Written in the background as responses arrive, and what is left when
                        // the process exits.
                        exit(0)
                    }
                }
            }
        }
        await #expect(processExitsWith: .success) { [data = data as String] in
            setenv("XDG_DATA_HOME", data, 1)
            let names = Set((HTTPCookieStorage.shared.cookies ?? []).map(\.name))
            var expected: Set<String> = []
            for writer in 0..<4 {
                for index in 0..<5 { expected.insert("w\(writer)-\(index)") }
            }
            exit(names == expected ? 0 : 1)
        }
    }

    @Test func aPlantedPublicSuffixCookieIsDroppedAndAFileThatIsNotACookieListIsLeftAlone() async throws {
        let data = try ScratchFolder.make("cookies-hostile").path
        let path = Self.sharedFile(in: data)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let expires = Date(timeIntervalSinceNow: 3600).timeIntervalSince1970
        let planted: [String: Any] = [
            ".co.uk/tracker": ["Name": "tracker", "Value": "1", "Domain": ".co.uk", "Path": "/", "Expires": expires],
            "example.org/ok": ["Name": "ok", "Value": "1", "Domain": "example.org", "Path": "/", "Expires": expires],
            "no-expiry": ["Name": "x", "Value": "1", "Domain": "example.org", "Path": "/"],
        ]
        try PropertyListSerialization.data(fromPropertyList: planted, format: .xml, options: 0)
            .write(to: URL(fileURLWithPath: path))
        await #expect(processExitsWith: .success) { [data = data as String] in
            setenv("XDG_DATA_HOME", data, 1)
            exit((HTTPCookieStorage.shared.cookies ?? []).map(\.name) == ["ok"] ? 0 : 1)
        }

        let garbage = Data("not a property list {".utf8)
        try garbage.write(to: URL(fileURLWithPath: path))
        await #expect(processExitsWith: .success) { [data = data as String] in
            setenv("XDG_DATA_HOME", data, 1)
            let storage = HTTPCookieStorage.shared
            storage.setCookie(cookie("memory", domain: "example.org", expires: Date(timeIntervalSinceNow: 60)))
            exit(storage.cookies?.map(\.name) == ["memory"] ? 0 : 1)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func aGroupIdentifierNamesAFileBesideTheSharedOneAndNeverAPath() async throws {
        let data = try ScratchFolder.make("cookies-group").path
        await #expect(processExitsWith: .success) { [data = data as String] in
            setenv("XDG_DATA_HOME", data, 1)
            let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "../../escape")
            storage.setCookie(cookie("grouped", domain: "example.org", expires: Date(timeIntervalSinceNow: 60)))
            exit(HTTPCookieStorage.shared.cookies?.isEmpty == true ? 0 : 1)
        }
        let folder = (Self.sharedFile(in: data) as NSString).deletingLastPathComponent
        let files = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(files.contains(".cookies...%2F..%2Fescape"))
        #expect(!FileManager.default.fileExists(atPath: data + "/escape"))
    }
}

private func cookie(_ name: String, domain: String, expires: Date?, secure: Bool = false) -> HTTPCookie {
    var properties: [HTTPCookiePropertyKey: Any] = [.name: name, .value: "v-\(name)", .domain: domain, .path: "/"]
    if let expires { properties[.expires] = expires }
    if secure { properties[.secure] = "TRUE" }
    return HTTPCookie(properties: properties)!
}
