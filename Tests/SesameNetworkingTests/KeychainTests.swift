import Sesame
import SesameNetworking
import SesameTesting
import Testing

/// Keychain Services as apps call them (the helpers are the shapes real apps copy), over a
/// private file store; the keyring and cross-process cases are in KeychainAcrossProcessesTests.
@Suite struct KeychainTests {
    /// A keychain of its own for each test: a credential store file in a scratch folder.
    func withKeychain(_ body: (CredentialStorage, URL) throws -> Void) throws {
        let folder = try ScratchFolder.make("keychain")
        let file = folder.appendingPathComponent("credentials.json")
        let storage = CredentialStorage(fileURL: file)
        try SesameKeychain.$storage.withValue(storage) { try body(storage, file) }
    }

    // The most copied helper: a token under a service and account.
    func save(_ token: String, service: String, account: String) -> OSStatus {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecValueData as String: token.data(using: .utf8)!,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
        ]
        return SecItemAdd(query as CFDictionary, nil)
    }

    func read(service: String, account: String) -> (OSStatus, String?) {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: kCFBooleanTrue!,
            kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status == errSecSuccess, let data = item as? Data else { return (status, nil) }
        return (status, String(data: data, encoding: .utf8))
    }

    @Test func aGenericPasswordIsAddedFoundUpdatedAndDeleted() throws {
        try withKeychain { _, _ in
            #expect(save("t0ken", service: "api", account: "ada") == errSecSuccess)
            #expect(save("again", service: "api", account: "ada") == errSecDuplicateItem)
            #expect(save("other", service: "api", account: "grace") == errSecSuccess)
            #expect(read(service: "api", account: "ada").1 == "t0ken")
            #expect(read(service: "api", account: "nobody").0 == errSecItemNotFound)

            let match: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api",
                kSecAttrAccount as String: "ada",
            ]
            let change: [String: Any] = [kSecValueData as String: Data("n3w".utf8)]
            #expect(SecItemUpdate(match as CFDictionary, change as CFDictionary) == errSecSuccess)
            #expect(read(service: "api", account: "ada").1 == "n3w")
            #expect(read(service: "api", account: "grace").1 == "other")

            // Renaming ada's item to grace's account would make two items one.
            let rename: [String: Any] = [kSecAttrAccount as String: "grace"]
            #expect(SecItemUpdate(match as CFDictionary, rename as CFDictionary) == errSecDuplicateItem)

            #expect(SecItemDelete(match as CFDictionary) == errSecSuccess)
            #expect(read(service: "api", account: "ada").0 == errSecItemNotFound)
            #expect(SecItemDelete(match as CFDictionary) == errSecItemNotFound)
            #expect(read(service: "api", account: "grace").1 == "other")
        }
    }

    @Test func attributesComeBackWithTheirTypesAndDates() throws {
        try withKeychain { _, _ in
            let before = Date()
            let add: [CFString: Any] = [
                kSecClass: kSecClassGenericPassword, kSecAttrService: "svc", kSecAttrAccount: "ada",
                kSecAttrLabel: "Ada's token", kSecAttrGeneric: Data([1, 2, 3]), kSecValueData: Data("x".utf8),
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            let query: [CFString: Any] = [
                kSecClass: kSecClassGenericPassword, kSecAttrService: "svc", kSecReturnAttributes: true,
                kSecReturnData: true,
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let item = try #require(result as? [String: Any])
            #expect(item[kSecAttrAccount as String] as? String == "ada")
            #expect(item[kSecAttrLabel as String] as? String == "Ada's token")
            #expect(item[kSecAttrGeneric as String] as? Data == Data([1, 2, 3]))
            #expect(item[kSecValueData as String] as? Data == Data("x".utf8))
            #expect(item[kSecClass as String] as? String == kSecClassGenericPassword as String)
            #expect(item[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked as String)
            let created = try #require(item[kSecAttrCreationDate as String] as? Date)
            #expect(created >= before.addingTimeInterval(-1) && created <= Date().addingTimeInterval(1))
        }
    }

    @Test func limitAllReturnsAnArrayAndSynchronizableItemsOnlyWhenAsked() throws {
        try withKeychain { _, _ in
            for account in ["a", "b", "c"] { #expect(save(account, service: "many", account: account) == 0) }
            let synced: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "many",
                kSecAttrAccount as String: "d", kSecAttrSynchronizable as String: true,
                kSecValueData as String: Data("d".utf8),
            ]
            #expect(SecItemAdd(synced as CFDictionary, nil) == errSecSuccess)

            func accounts(_ extra: [String: Any]) -> [String] {
                var query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "many",
                    kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
                ]
                query.merge(extra) { _, new in new }
                var result: CFTypeRef?
                guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess,
                    let items = result as? [[String: Any]]
                else { return [] }
                return items.compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
            }
            #expect(accounts([:]) == ["a", "b", "c"])
            #expect(accounts([kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]) == ["a", "b", "c", "d"])
            #expect(accounts([kSecAttrSynchronizable as String: kCFBooleanTrue!]) == ["d"])

            // Case-insensitive matching when asked, exact otherwise.
            #expect(accounts([kSecAttrService as String: "MANY"]) == [])
            #expect(accounts([kSecAttrService as String: "MANY", kSecMatchCaseInsensitive as String: true]).count == 3)
        }
    }

    @Test func aPersistentReferenceFindsItsItem() throws {
        try withKeychain { _, _ in
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "ref",
                kSecValueData as String: Data("secret".utf8), kSecReturnPersistentRef as String: true,
            ]
            var reference: CFTypeRef?
            #expect(SecItemAdd(add as CFDictionary, &reference) == errSecSuccess)
            let persistent = try #require(reference as? Data)
            let query: [String: Any] = [kSecValuePersistentRef as String: persistent, kSecReturnData as String: true]
            var data: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &data) == errSecSuccess)
            #expect(data as? Data == Data("secret".utf8))
        }
    }

    @Test func badQueriesAreParameterErrorsThatChangeNothing() throws {
        try withKeychain { _, file in
            let noClass: [String: Any] = [kSecAttrService as String: "x", kSecValueData as String: Data()]
            #expect(SecItemAdd(noClass as CFDictionary, nil) == errSecParam)
            let badClass: [String: Any] = [kSecClass as String: "nope"]
            #expect(SecItemCopyMatching(badClass as CFDictionary, nil) == errSecParam)
            let textData: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecValueData as String: "text",
            ]
            #expect(SecItemAdd(textData as CFDictionary, nil) == errSecParam)
            let classChange: [String: Any] = [kSecClass as String: kSecClassInternetPassword]
            #expect(save("x", service: "s", account: "a") == errSecSuccess)
            let match: [String: Any] = [kSecClass as String: kSecClassGenericPassword]
            #expect(SecItemUpdate(match as CFDictionary, classChange as CFDictionary) == errSecParam)
            #expect(read(service: "s", account: "a").1 == "x")
            let items = file.deletingPathExtension().appendingPathExtension("items.json")
            #expect(FileManager.default.fileExists(atPath: items.path))
        }
    }

    @Test func aCorruptItemFileIsAnErrorAndIsLeftAsItIs() throws {
        try withKeychain { _, file in
            #expect(save("x", service: "s", account: "a") == errSecSuccess)
            let items = file.deletingPathExtension().appendingPathExtension("items.json")
            try Data("{ not json".utf8).write(to: items)
            #expect(read(service: "s", account: "a").0 == errSecIO)
            #expect(save("y", service: "s", account: "b") == errSecIO)
            #expect(try Data(contentsOf: items) == Data("{ not json".utf8))
        }
    }

    // MARK: - Internet passwords are URLCredentialStorage's entries

    @Test func anInternetPasswordIsTheCredentialURLCredentialStorageFinds() throws {
        try withKeychain { storage, _ in
            let add: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "api.example",
                kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443,
                kSecAttrSecurityDomain as String: "API",
                kSecAttrAuthenticationType as String:
                    kSecAttrAuthenticationTypeHTTPBasic,
                kSecAttrAccount as String: "ada", kSecValueData as String: Data("s3cret".utf8),
                kSecAttrLabel as String: "api.example (ada)", kSecAttrPath as String: "/v1",
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)

            let space = URLProtectionSpace(
                host: "api.example",
                port: 443,
                protocol: NSURLProtectionSpaceHTTPS,
                realm: "API",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            )
            let credentials = URLCredentialStorage(storage)
            #expect(credentials.credentials(for: space)?["ada"]?.password == "s3cret")
            // Not the space's default: Foundation reports only a default that was set.
            #expect(credentials.defaultCredential(for: space) == nil)

            // And the other way: a credential stored permanently is an internet password item.
            let proxy = URLProtectionSpace(
                proxyHost: "proxy.example",
                port: 3128,
                type: NSURLProtectionSpaceHTTPProxy,
                realm: nil,
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            )
            credentials.set(URLCredential(user: "grace", password: "pr0xy", persistence: .permanent), for: proxy)
            let query: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "proxy.example",
                kSecReturnAttributes as String: true, kSecReturnData as String: true,
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let item = try #require(result as? [String: Any])
            #expect(item[kSecAttrProtocol as String] as? String == kSecAttrProtocolHTTPProxy as String)
            #expect(item[kSecAttrPort as String] as? Int == 3128)
            #expect(item[kSecAttrAccount as String] as? String == "grace")
            #expect(item[kSecValueData as String] as? Data == Data("pr0xy".utf8))

            // The label and path the space has no field for are kept beside it.
            let labelled: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "api.example",
                kSecReturnAttributes as String: true,
            ]
            #expect(SecItemCopyMatching(labelled as CFDictionary, &result) == errSecSuccess)
            let api = try #require(result as? [String: Any])
            #expect(api[kSecAttrLabel as String] as? String == "api.example (ada)")
            #expect(api[kSecAttrPath as String] as? String == "/v1")

            // Deleting the item removes the credential.
            let delete: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "api.example",
                kSecAttrAccount as String: "ada",
            ]
            #expect(SecItemDelete(delete as CFDictionary) == errSecSuccess)
            #expect(credentials.credentials(for: space) == nil)
        }
    }

    // MARK: - Certificates, keys, identities

    @Test func aCertificateIsKeptAndFoundByLabelWithApplesDerivedAttributes() throws {
        try withKeychain { _, _ in
            let leaf = try pki.leaf()
            let certificate = SecCertificateCreateWithData(nil, der(leaf.certificatePEM) as CFData)!
            let add: [String: Any] = [
                kSecClass as String: kSecClassCertificate, kSecValueRef as String: certificate,
                kSecAttrLabel as String: "pinned-server",
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)
            let query: [String: Any] = [
                kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: "pinned-server",
                kSecReturnRef as String: true, kSecReturnAttributes as String: true,
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let item = try #require(result as? [String: Any])
            let found = try #require(item[kSecValueRef as String] as? SecCertificate)
            #expect(SecCertificateCopyData(found) as Data == der(leaf.certificatePEM))
            #expect(item[kSecAttrSubject as String] as? Data == leaf.certificate.subject.derEncoded)
            #expect(item[kSecAttrPublicKeyHash as String] as? Data == leaf.certificate.publicKey.keyIdentifier)
            #expect(item[kSecAttrCertificateEncoding as String] as? Int == 3)

            let bySubject: [String: Any] = [
                kSecClass as String: kSecClassCertificate, kSecMatchSubjectContains as String: "LOCALHOST",
                kSecMatchValidOnDate as String: NSNull(),
            ]
            #expect(SecItemCopyMatching(bySubject as CFDictionary, nil) == errSecSuccess)
        }
    }

    @Test func anImportedIdentityIsKeptAsCertificateAndKeyAndSignsWhenReadBack() throws {
        try withKeychain { _, _ in
            let client = try pki.clientCertificate(commonName: "kept-identity")
            var items: CFArray?
            let options = [kSecImportExportPassphrase as String: "pw"] as CFDictionary
            #expect(SecPKCS12Import(try client.pkcs12(password: "pw") as CFData, options, &items) == errSecSuccess)
            let first = try #require((items as? [[String: Any]])?.first)
            let identity = try #require(first[kSecImportItemIdentity as String] as? SecIdentity)

            let add: [String: Any] = [kSecValueRef as String: identity, kSecAttrLabel as String: "client"]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)

            // Apple keeps the parts: a certificate and a private key.
            let keyQuery: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
                kSecReturnRef as String: true,
            ]
            var keyResult: CFTypeRef?
            #expect(SecItemCopyMatching(keyQuery as CFDictionary, &keyResult) == errSecSuccess)
            let certQuery: [String: Any] = [
                kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: "client",
            ]
            #expect(SecItemCopyMatching(certQuery as CFDictionary, nil) == errSecSuccess)

            let query: [String: Any] = [
                kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "client",
                kSecReturnRef as String: true,
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let kept = try #require(result as? SecIdentity)
            var privateKey: SecKey?
            #expect(SecIdentityCopyPrivateKey(kept, &privateKey) == errSecSuccess)
            let message = Data("sign me".utf8)
            let signer = try #require(privateKey)
            let signature = try #require(
                SecKeyCreateSignature(signer, .ecdsaSignatureMessageX962SHA256, message as CFData, nil)
            )
            var certificate: SecCertificate?
            #expect(SecIdentityCopyCertificate(kept, &certificate) == errSecSuccess)
            let keptCertificate = try #require(certificate)
            let publicKey = try #require(SecCertificateCopyKey(keptCertificate))
            #expect(
                SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message as CFData, signature, nil)
            )

            // Deleting the identity deletes both parts.
            #expect(SecItemDelete([kSecClass as String: kSecClassIdentity] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(keyQuery as CFDictionary, nil) == errSecItemNotFound)
            #expect(SecItemCopyMatching(certQuery as CFDictionary, nil) == errSecItemNotFound)
        }
    }

    @Test func aPublicKeyIsKeptUnderItsApplicationTag() throws {
        try withKeychain { _, _ in
            let leaf = try pki.leaf(key: .rsa2048)
            let key = SecCertificateCopyKey(SecCertificateCreateWithData(nil, der(leaf.certificatePEM) as CFData)!)!
            let raw = SecKeyCopyExternalRepresentation(key, nil)! as Data
            let tag = "com.example.server-key".data(using: .utf8)!
            let add: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag,
                kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeyClass as String: kSecAttrKeyClassPublic,
                kSecValueData as String: raw,
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            let query: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag,
                kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecReturnRef as String: true,
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let found = try #require(result as? SecKey)
            #expect(SecKeyCopyExternalRepresentation(found, nil) as Data? == raw)
            let attributes = try #require(SecKeyCopyAttributes(found) as? [String: Any])
            #expect(attributes[kSecAttrKeySizeInBits as String] as? Int == 2048)
        }
    }
}

/// The other shapes keychain helpers take in real apps: `CFString`-keyed literals cast with
/// `as CFDictionary`, `noErr`, `AnyObject?` results and `withUnsafeMutablePointer`.
final class KeychainHelper {
    static let standard = KeychainHelper()

    func save(_ data: Data, service: String, account: String) -> Bool {
        let query =
            [
                kSecValueData: data,
                kSecClass: kSecClassGenericPassword,
                kSecAttrService: service,
                kSecAttrAccount: account,
            ] as CFDictionary
        var status = SecItemAdd(query, nil)
        if status == errSecDuplicateItem {
            let query =
                [
                    kSecAttrService: service,
                    kSecAttrAccount: account,
                    kSecClass: kSecClassGenericPassword,
                ] as CFDictionary
            let attributesToUpdate = [kSecValueData: data] as CFDictionary
            status = SecItemUpdate(query, attributesToUpdate)
        }
        return status == noErr
    }

    func read(service: String, account: String) -> Data? {
        let query =
            [
                kSecAttrService: service,
                kSecAttrAccount: account,
                kSecClass: kSecClassGenericPassword,
                kSecReturnData: true,
            ] as CFDictionary
        var result: AnyObject?
        let status = withUnsafeMutablePointer(to: &result) { SecItemCopyMatching(query, UnsafeMutablePointer($0)) }
        guard status == noErr else {
            _ = SecCopyErrorMessageString(status, nil) as String?
            return nil
        }
        return result as? Data
    }

    func delete(service: String, account: String) {
        let query =
            [
                kSecAttrService: service,
                kSecAttrAccount: account,
                kSecClass: kSecClassGenericPassword,
            ] as CFDictionary
        SecItemDelete(query)
    }
}

extension KeychainTests {
    @Test func theHelperShapeAppsCopySavesOverwritesReadsAndDeletes() throws {
        try withKeychain { _, _ in
            let helper = KeychainHelper.standard
            #expect(helper.save(Data("one".utf8), service: "access-token", account: "app"))
            #expect(helper.save(Data("two".utf8), service: "access-token", account: "app"))
            #expect(helper.read(service: "access-token", account: "app") == Data("two".utf8))
            helper.delete(service: "access-token", account: "app")
            #expect(helper.read(service: "access-token", account: "app") == nil)
        }
    }
}
