import SesameNetworking
import SesameTesting
import Testing

/// Keychain items outlive the process that added them and are shared with every other process
/// of the user, as on Apple: through the file store without a session bus, through the
/// keyring (GNOME Keyring on a private bus) with one.
@Suite(.serialized) struct KeychainAcrossProcessesTests {
    @Test func itemsAddedByOneProcessAreFoundByAnotherAndConcurrentWritersLoseNothing() async throws {
        let home = try ScratchFolder.make("keychain-home").path
        await #expect(processExitsWith: .success) { [home = home as String] in
            setenv("XDG_DATA_HOME", home, 1)
            exit(addTokenAndServerPassword(tag: "first") ? 0 : 1)
        }
        // Four writers at once, ten items each.
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    await #expect(processExitsWith: .success) { [home = home as String, writer = writer as Int] in
                        setenv("XDG_DATA_HOME", home, 1)
                        for index in 0..<10 {
                            guard addGenericPassword(service: "concurrent", account: "\(writer)-\(index)") else {
                                exit(1)
                            }
                        }
                        exit(0)
                    }
                }
            }
        }
        await #expect(processExitsWith: .success) { [home = home as String] in
            setenv("XDG_DATA_HOME", home, 1)
            guard findTokenAndServerPassword(tag: "first") else { exit(1) }
            exit(countGenericPasswords(service: "concurrent") == 40 ? 0 : 2)
        }
    }

    @Test func onADesktopItemsAreKeptInTheKeyring() async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        await #expect(processExitsWith: .success) { [environment = keyring.environment as [String: String]] in
            for (name, value) in environment { setenv(name, value, 1) }
            exit(addTokenAndServerPassword(tag: "desktop") ? 0 : 1)
        }
        // In the keyring, under Sesame's schemas: the internet password as the server's credential.
        let credential = try keyring.secretTool([
            "lookup", "xdg:schema", "org.sesame.Credential", "host", "api.example", "user", "ada",
        ])
        #expect(credential.output == "s3cret-desktop")
        let items = try keyring.secretTool(["search", "--all", "xdg:schema", "org.sesame.Item", "class", "genp"])
        #expect(items.status == 0 && items.output.contains("label = Sesame: token / ada"))
        let file = keyring.home.appendingPathComponent("data/sesame/credentials.items.json").path
        #expect(!FileManager.default.fileExists(atPath: file))

        await #expect(processExitsWith: .success) { [environment = keyring.environment as [String: String]] in
            for (name, value) in environment { setenv(name, value, 1) }
            guard findTokenAndServerPassword(tag: "desktop") else { exit(1) }
            // Updated and deleted in the keyring too.
            let match: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "token",
            ]
            guard SecItemUpdate(match as CFDictionary, [kSecValueData as String: Data("t2".utf8)] as CFDictionary) == 0,
                readGenericPassword(service: "token", account: "ada") == "t2",
                SecItemDelete(match as CFDictionary) == errSecSuccess,
                readGenericPassword(service: "token", account: "ada") == nil
            else { exit(2) }
            exit(0)
        }
    }
}

/// An app's sign-in: its token as a generic password and the server's password as an internet
/// password (true when both are added).
func addTokenAndServerPassword(tag: String) -> Bool {
    let token: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "token",
        kSecAttrAccount as String: "ada", kSecValueData as String: Data("t0ken-\(tag)".utf8),
    ]
    let server: [String: Any] = [
        kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "api.example",
        kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrAccount as String: "ada",
        kSecValueData as String: Data("s3cret-\(tag)".utf8),
    ]
    return SecItemAdd(token as CFDictionary, nil) == errSecSuccess
        && SecItemAdd(server as CFDictionary, nil) == errSecSuccess
}

/// A later run of the app: both items are there (true), and the server's password is what
/// `URLCredentialStorage.shared` answers for the server.
func findTokenAndServerPassword(tag: String) -> Bool {
    let space = URLProtectionSpace(
        host: "api.example",
        port: 443,
        protocol: NSURLProtectionSpaceHTTPS,
        realm: nil,
        authenticationMethod: NSURLAuthenticationMethodDefault
    )
    let query: [String: Any] = [
        kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "api.example",
        kSecAttrAccount as String: "ada", kSecReturnData as String: true,
    ]
    var result: CFTypeRef?
    guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return false }
    return readGenericPassword(service: "token", account: "ada") == "t0ken-\(tag)"
        && (result as? Data) == Data("s3cret-\(tag)".utf8)
        && URLCredentialStorage.shared.credentials(for: space)?["ada"]?.password == "s3cret-\(tag)"
}

func addGenericPassword(service: String, account: String) -> Bool {
    let query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
        kSecAttrAccount as String: account, kSecValueData as String: Data(account.utf8),
    ]
    return SecItemAdd(query as CFDictionary, nil) == errSecSuccess
}

func readGenericPassword(service: String, account: String) -> String? {
    let query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
        kSecAttrAccount as String: account, kSecReturnData as String: true,
    ]
    var result: CFTypeRef?
    guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, let data = result as? Data else {
        return nil
    }
    return String(data: data, encoding: .utf8)
}

func countGenericPasswords(service: String) -> Int {
    let query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
        kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
    ]
    var result: CFTypeRef?
    guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return 0 }
    return (result as? [[String: Any]])?.count ?? 0
}
