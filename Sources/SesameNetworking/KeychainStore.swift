import Foundation
import Sesame

/// Where the SecItem functions keep items: the store of a Sesame `CredentialStorage` (the
/// Secret Service where a session bus answers, else the file, as the storage chooses).
/// Internet passwords are the storage's own entries, so `URLCredentialStorage` and
/// `SecItemCopyMatching` see the same items; the other classes are the store's
/// ``StoredItem``s.
struct KeychainStore {
    let storage: CredentialStorage
    let store: any CredentialStore

    init(_ storage: CredentialStorage) throws(KeychainFailure) {
        let store: (any CredentialStore)?
        do {
            store = try storage.store
        } catch {
            throw KeychainFailure(error)
        }
        guard let store else {
            throw KeychainFailure(
                errSecNotAvailable,
                "the keychain's CredentialStorage keeps nothing on disk (give SesameKeychain one with a store)"
            )
        }
        self.storage = storage
        self.store = store
    }

    // MARK: - Reading

    /// The items of a class; an identity is a private key with the certificate its
    /// application label names.
    func items(_ itemClass: KeychainClass) throws(KeychainFailure) -> [KeychainItem] {
        switch itemClass {
        case .internetPassword:
            return try internetPasswords()
        case .identity:
            let certificates = try items(.certificate)
            return try items(.key).compactMap { key in
                guard let owner = (key.reference as? SecKey)?.privateKeyOwner,
                    let label = key.attributes[kSecAttrApplicationLabel as String],
                    let certificate = certificates.first(where: {
                        $0.attributes[kSecAttrPublicKeyHash as String] == label
                    })
                else { return nil }
                return KeychainItem(
                    itemClass: .identity,
                    id: "\(certificate.id)+\(key.id)",
                    attributes: key.attributes.merging(certificate.attributes) { _, fromCertificate in fromCertificate
                    },
                    data: nil,
                    reference: SecIdentity(owner)
                )
            }
        case .genericPassword, .certificate, .key:
            return try stored(itemClass).compactMap(Self.item(from:))
        }
    }

    // MARK: - Writing

    /// Replaces the items of a class (not identities: their certificates and keys are changed
    /// each in its class) with what `change` returns.
    func modify(
        _ itemClass: KeychainClass,
        _ change: ([KeychainItem]) throws(KeychainFailure) -> [KeychainItem]
    ) throws(KeychainFailure) {
        switch itemClass {
        case .identity:
            throw KeychainFailure(errSecParam, "identities are changed through their certificate and key")
        case .internetPassword:
            try modifyInternetPasswords(change)
        case .genericPassword, .certificate, .key:
            var failure: KeychainFailure?
            do {
                try store.modifyItems(ofClass: itemClass.rawValue) { stored throws(SesameError) in
                    do throws(KeychainFailure) {
                        var result: [StoredItem] = []
                        for item in try change(stored.compactMap(Self.item(from:))) {
                            result.append(try Self.stored(item))
                        }
                        return result
                    } catch {
                        failure = error
                        throw SesameError(.cancelled, "the change was refused")
                    }
                }
            } catch {
                throw failure ?? KeychainFailure(error)
            }
        }
    }

    // MARK: - Stored items

    private func stored(_ itemClass: KeychainClass) throws(KeychainFailure) -> [StoredItem] {
        do {
            return try store.items(ofClass: itemClass.rawValue)
        } catch {
            throw KeychainFailure(error)
        }
    }

    /// The item a stored one holds; nil when it is not one Sesame wrote (skipped, never guessed at).
    static func item(from stored: StoredItem) -> KeychainItem? {
        guard let itemClass = KeychainClass(rawValue: stored.itemClass),
            let attributes = KeychainValue.decode(stored.attributes)
        else { return nil }
        var item = KeychainItem(itemClass: itemClass, id: stored.id, attributes: attributes, data: Data(stored.data))
        switch itemClass {
        case .certificate:
            guard let certificate = try? Certificate(derEncoded: Data(stored.data)) else { return nil }
            item.reference = SecCertificate(certificate)
        case .key:
            guard let key = KeychainItem.key(stored: Data(stored.data), attributes: attributes) else { return nil }
            item.reference = key
            item.data = key.privateKeyOwner?.privateKeyRawRepresentation ?? key.publicKey.rawRepresentation
        case .genericPassword, .internetPassword, .identity:
            break
        }
        return item
    }

    static func stored(_ item: KeychainItem) throws(KeychainFailure) -> StoredItem {
        let bytes: Data
        switch item.itemClass {
        case .key:
            guard let key = item.reference as? SecKey else {
                throw KeychainFailure(errSecParam, "a key item needs its key")
            }
            bytes = try KeychainItem.storedBytes(of: key)
        case .certificate:
            guard let certificate = item.reference as? SecCertificate else {
                throw KeychainFailure(errSecParam, "a certificate item needs its certificate")
            }
            bytes = certificate.certificate.derEncoded
        case .genericPassword, .internetPassword, .identity:
            bytes = item.data ?? Data()
        }
        return StoredItem(
            id: item.id,
            itemClass: item.itemClass.rawValue,
            attributes: KeychainValue.encode(item.attributes),
            data: Array(bytes),
            label: label(of: item)
        )
    }

    /// What a keyring manager shows: the item's label, else its service and account.
    private static func label(of item: KeychainItem) -> String {
        if let label = item.attributes[kSecAttrLabel as String]?.text, !label.isEmpty { return "Sesame: \(label)" }
        let parts = [kSecAttrService as String, kSecAttrAccount as String].compactMap { item.attributes[$0]?.text }
        return parts.isEmpty ? "Sesame keychain item" : "Sesame: " + parts.joined(separator: " / ")
    }

    // MARK: - Internet passwords

    private func internetPasswords() throws(KeychainFailure) -> [KeychainItem] {
        let entries: [StoredCredential]
        do {
            entries = try store.entries(for: nil)
        } catch {
            throw KeychainFailure(error)
        }
        let companions = Dictionary(
            try companionItems().map { ($0.id, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        // One item per space and user: Sesame's own before another program's (as the storage reads).
        var seen = Set<String>()
        var result: [KeychainItem] = []
        for entry in entries.sorted(by: { $0.origin == .sesame && $1.origin != .sesame }) {
            let id = KeychainInternetPassword.id(of: entry.protectionSpace, user: entry.user)
            guard seen.insert(id).inserted else { continue }
            var attributes = companions[id].flatMap { KeychainValue.decode($0.attributes) } ?? [:]
            attributes.merge(KeychainInternetPassword.attributes(of: entry.protectionSpace, user: entry.user)) {
                _,
                fromSpace in fromSpace
            }
            result.append(
                KeychainItem(
                    itemClass: .internetPassword,
                    id: id,
                    attributes: attributes,
                    data: Data(entry.password.utf8),
                    isWritable: entry.origin == .sesame
                )
            )
        }
        return result
    }

    /// The companions that keep what a protection space has no field for; none when the store
    /// keeps no items (a caller's own store).
    private func companionItems() throws(KeychainFailure) -> [StoredItem] {
        do {
            return try store.items(ofClass: KeychainClass.internetPassword.rawValue)
        } catch  where error.code == .credentialStoreUnavailable {
            return []
        } catch {
            throw KeychainFailure(error)
        }
    }

    private func modifyInternetPasswords(
        _ change: ([KeychainItem]) throws(KeychainFailure) -> [KeychainItem]
    ) throws(KeychainFailure) {
        let before = try internetPasswords()
        var after: [KeychainItem] = []
        for var item in try change(before) {
            let (space, user) = try KeychainInternetPassword.space(of: item.attributes)
            item.id = KeychainInternetPassword.id(of: space, user: user)
            item.attributes.merge(KeychainInternetPassword.attributes(of: space, user: user)) { _, fromSpace in
                fromSpace
            }
            after.append(item)
        }
        let old = Dictionary(before.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let new = Dictionary(after.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for item in before where !item.isWritable && new[item.id].map({ !Self.same($0, item) }) ?? true {
            let name = [kSecAttrAccount, kSecAttrServer].compactMap { item.attributes[$0 as String]?.text }
            throw KeychainFailure(
                errSecInteractionNotAllowed,
                "the password of \(name.joined(separator: "@")) belongs to another program's keyring schema; Sesame does not change or remove it"
            )
        }
        let kept = Set(new.keys)
        do {
            // Written before anything is removed: a failure part-way loses no password.
            for item in after where old[item.id].map({ !Self.same($0, item) }) ?? true {
                guard let data = item.data, let password = String(data: data, encoding: .utf8) else {
                    throw KeychainFailure(errSecParam, "an internet password's kSecValueData must be UTF-8 text")
                }
                let (space, user) = try KeychainInternetPassword.space(of: item.attributes)
                try storage.set(Credential(user: user, password: password, persistence: .permanent), for: space)
            }
            for item in before where !kept.contains(item.id) {
                let (space, user) = try KeychainInternetPassword.space(of: item.attributes)
                try storage.remove(Credential(user: user, password: "", persistence: .permanent), for: space)
            }
        } catch let failure as KeychainFailure {
            throw failure
        } catch let error as SesameError {
            throw KeychainFailure(error)
        } catch {
            throw KeychainFailure(errSecIO, "\(error)")
        }
        try writeCompanions(for: after.filter(\.isWritable))
    }

    /// The companions of `items`, and no others (a companion whose password is gone goes too).
    private func writeCompanions(for items: [KeychainItem]) throws(KeychainFailure) {
        let companions = items.map { item in
            StoredItem(
                id: item.id,
                itemClass: KeychainClass.internetPassword.rawValue,
                attributes: KeychainValue.encode(
                    item.attributes.filter { !KeychainInternetPassword.spaceAttributes.contains($0.key) }
                ),
                data: [],
                label: "Sesame: attributes of an internet password"
            )
        }
        do {
            try store.modifyItems(ofClass: KeychainClass.internetPassword.rawValue) { _ in companions }
        } catch  where error.code == .credentialStoreUnavailable && !(store is FileCredentialStore) {
            // A caller's own store that keeps no items: the password is kept, its extra attributes are not.
        } catch {
            throw KeychainFailure(error)
        }
    }

    private static func same(_ lhs: KeychainItem, _ rhs: KeychainItem) -> Bool {
        lhs.id == rhs.id && lhs.data == rhs.data && lhs.attributes == rhs.attributes
    }
}
