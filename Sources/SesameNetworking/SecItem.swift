import Foundation
import Sesame

/// Where the SecItem functions keep items (Sesame's addition: Apple's keychain has one place).
public enum SesameKeychain {
    /// The storage whose store keeps keychain items: `CredentialStorage.shared` (the Secret
    /// Service where a session bus answers, else the file `$XDG_DATA_HOME/sesame/credentials.json`
    /// with its items beside it in `credentials.items.json`). Bind another for a task with
    /// `SesameKeychain.$storage.withValue(_:operation:)`, as tests do.
    @TaskLocal public static var storage: CredentialStorage = .shared
}

/// Adds an item (`SecItemAdd`): `kSecClass` (or a `kSecValueRef` that implies it), its
/// attributes, and `kSecValueData` or `kSecValueRef`. `errSecDuplicateItem` when an item of the
/// class already has the same primary key; the `kSecReturn…` keys return the new item.
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    Keychain.run("SecItemAdd") { () throws(KeychainFailure) in
        let query = try KeychainQuery(attributes)
        let added = try Keychain(SesameKeychain.storage).add(query)
        result?.pointee = query.result(for: [added])
    }
}

/// Finds items (`SecItemCopyMatching`): those of `kSecClass` whose attributes equal the query's,
/// up to `kSecMatchLimit` (one by default), returned as the `kSecReturn…` keys ask.
/// `errSecItemNotFound` when none match.
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    Keychain.run("SecItemCopyMatching") { () throws(KeychainFailure) in
        let query = try KeychainQuery(query)
        var found = try Keychain(SesameKeychain.storage).search(query)
        if let limit = query.limit { found = Array(found.prefix(limit)) }
        result?.pointee = query.result(for: found)
    }
}

/// Changes every item the query matches (`SecItemUpdate`) to have `attributesToUpdate` (and
/// `kSecValueData`). `errSecItemNotFound` when none match; `errSecDuplicateItem` when the change
/// would give two items one primary key.
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    Keychain.run("SecItemUpdate") { () throws(KeychainFailure) in
        let search = try KeychainQuery(query)
        let changes = try KeychainQuery(attributesToUpdate)
        try Keychain(SesameKeychain.storage).update(search, with: changes)
    }
}

/// Removes every item the query matches (`SecItemDelete`); `errSecItemNotFound` when none match.
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    Keychain.run("SecItemDelete") { () throws(KeychainFailure) in
        try Keychain(SesameKeychain.storage).delete(try KeychainQuery(query))
    }
}

/// The SecItem functions' rules over a ``KeychainStore``.
struct Keychain {
    let store: KeychainStore

    init(_ storage: CredentialStorage) throws(KeychainFailure) { store = try KeychainStore(storage) }

    /// Runs a SecItem function: its status, with the reason for a failure other than "not found"
    /// or "duplicate" written to standard error (Apple's statuses say too little to act on).
    static func run(_ function: String, _ body: () throws(KeychainFailure) -> Void) -> OSStatus {
        do {
            try body()
            return errSecSuccess
        } catch {
            if error.status != errSecItemNotFound && error.status != errSecDuplicateItem {
                FileHandle.standardError.write(Data("\(function): \(error.message) (OSStatus \(error.status))\n".utf8))
            }
            return error.status
        }
    }

    // MARK: - Search

    func search(_ query: KeychainQuery) throws(KeychainFailure) -> [KeychainItem] {
        var classes = try Self.classes(of: query)
        if let reference = query.persistentReference {
            guard let (itemClass, _) = KeychainItem.parsePersistentReference(reference) else {
                throw KeychainFailure(errSecItemNotFound, "not a persistent reference Sesame made")
            }
            classes = classes.filter { $0 == itemClass }
        }
        var found: [KeychainItem] = []
        for itemClass in classes { found += try store.items(itemClass).filter(query.selects) }
        guard !found.isEmpty else { throw KeychainFailure(errSecItemNotFound, "no item matches") }
        return found.sorted(by: Self.order)
    }

    /// The class a query names; with none, a persistent reference's class (the only search
    /// Apple allows without `kSecClass`).
    private static func classes(of query: KeychainQuery) throws(KeychainFailure) -> [KeychainClass] {
        if let itemClass = query.itemClass { return [itemClass] }
        if let reference = query.persistentReference,
            let (itemClass, _) = KeychainItem.parsePersistentReference(reference)
        {
            return [itemClass]
        }
        throw KeychainFailure(errSecParam, "kSecClass is missing")
    }

    /// Oldest first, then by identifier: Apple promises no order; this one is stable.
    private static func order(_ lhs: KeychainItem, _ rhs: KeychainItem) -> Bool {
        let created = kSecAttrCreationDate as String
        if case .date(let left)? = lhs.attributes[created], case .date(let right)? = rhs.attributes[created],
            left != right
        {
            return left < right
        }
        return lhs.id < rhs.id
    }

    // MARK: - Add

    func add(_ query: KeychainQuery) throws(KeychainFailure) -> KeychainItem {
        guard let itemClass = query.itemClass else {
            throw KeychainFailure(errSecParam, "kSecClass is missing (and no kSecValueRef implies it)")
        }
        var attributes = query.attributes
        if query.synchronizable == .yes { attributes[kSecAttrSynchronizable as String] = .bool(true) }
        if query.synchronizable == .any {
            throw KeychainFailure(errSecParam, "kSecAttrSynchronizableAny is for searches, not for a new item")
        }
        let now = Date()
        attributes[kSecAttrCreationDate as String] = attributes[kSecAttrCreationDate as String] ?? .date(now)
        attributes[kSecAttrModificationDate as String] = attributes[kSecAttrModificationDate as String] ?? .date(now)
        attributes[kSecAttrAccessible as String] =
            attributes[kSecAttrAccessible as String] ?? .string(kSecAttrAccessibleWhenUnlocked as String)
        switch itemClass {
        case .genericPassword, .internetPassword:
            if query.valueReference != nil {
                throw KeychainFailure(errSecParam, "a password item takes kSecValueData, not kSecValueRef")
            }
            var item = KeychainItem(
                itemClass: itemClass,
                id: UUID().uuidString,
                attributes: attributes,
                data: query.valueData
            )
            if itemClass == .internetPassword {
                let (space, user) = try KeychainInternetPassword.space(of: attributes)
                item.id = KeychainInternetPassword.id(of: space, user: user)
                item.attributes.merge(KeychainInternetPassword.attributes(of: space, user: user)) { _, fromSpace in
                    fromSpace
                }
                item.data = query.valueData ?? Data()
            }
            return try insert(item)
        case .certificate:
            return try insert(try Self.certificateItem(query, attributes: attributes))
        case .key:
            return try insert(try Self.keyItem(query, attributes: attributes))
        case .identity:
            guard let identity = query.valueReference as? SecIdentity else {
                throw KeychainFailure(errSecParam, "an identity is added with kSecValueRef (a SecIdentity)")
            }
            return try addIdentity(identity.identity, attributes: attributes)
        }
    }

    /// Adds `item` unless its class has one with the same primary key.
    private func insert(_ item: KeychainItem) throws(KeychainFailure) -> KeychainItem {
        try store.modify(item.itemClass) { items throws(KeychainFailure) in
            if items.contains(where: { $0.primaryKey == item.primaryKey || $0.id == item.id }) {
                throw KeychainFailure(errSecDuplicateItem, "an item with the same primary key exists")
            }
            return items + [item]
        }
        return item
    }

    /// An identity is kept as Apple keeps it: its certificate and its private key, each an item
    /// of its class (either may already be there; both is a duplicate).
    private func addIdentity(
        _ identity: Identity,
        attributes: [String: KeychainValue]
    ) throws(KeychainFailure) -> KeychainItem {
        let certificate = try Self.certificateItem(
            KeychainQuery(reference: SecCertificate(identity.certificate)),
            attributes: attributes
        )
        let key = try Self.keyItem(KeychainQuery(reference: SecKey(privateKeyOf: identity)), attributes: attributes)
        var added = 0
        for item in [certificate, key] {
            do {
                _ = try insert(item)
                added += 1
            } catch  where error.status == errSecDuplicateItem {
                continue
            }
        }
        guard added > 0 else { throw KeychainFailure(errSecDuplicateItem, "the identity is already kept") }
        guard
            let kept = try store.items(.identity).first(where: { ($0.reference as? SecIdentity)?.identity == identity })
        else { throw KeychainFailure(errSecIO, "the identity was stored but does not read back") }
        return kept
    }

    private static func certificateItem(
        _ query: KeychainQuery,
        attributes: [String: KeychainValue]
    ) throws(KeychainFailure) -> KeychainItem {
        let certificate: Certificate
        if let reference = query.valueReference as? SecCertificate {
            certificate = reference.certificate
        } else if let data = query.valueData, let parsed = try? Certificate(derEncoded: data) {
            certificate = parsed
        } else {
            throw KeychainFailure(
                errSecParam,
                "a certificate item needs kSecValueRef (a SecCertificate) or DER kSecValueData"
            )
        }
        var item = KeychainItem(
            itemClass: .certificate,
            id: UUID().uuidString,
            attributes: attributes,
            data: certificate.derEncoded,
            reference: SecCertificate(certificate)
        )
        let derived = KeychainItem.certificateAttributes(certificate)
        item.attributes.merge(derived) { given, derivedValue in given }
        for name in KeychainClass.certificate.derivedAttributes { item.attributes[name] = derived[name] }
        return item
    }

    private static func keyItem(
        _ query: KeychainQuery,
        attributes: [String: KeychainValue]
    ) throws(KeychainFailure) -> KeychainItem {
        let key: SecKey
        if let reference = query.valueReference as? SecKey {
            key = reference
        } else if let data = query.valueData {
            guard let made = KeychainItem.key(stored: data, attributes: attributes), made.privateKeyOwner == nil else {
                throw KeychainFailure(
                    errSecParam,
                    "kSecValueData makes a public key here, with kSecAttrKeyType and kSecAttrKeyClassPublic (private keys are added as the SecKey of an identity)"
                )
            }
            key = made
        } else {
            throw KeychainFailure(errSecParam, "a key item needs kSecValueRef (a SecKey) or kSecValueData")
        }
        let derived = KeychainItem.keyAttributes(key)
        var item = KeychainItem(
            itemClass: .key,
            id: UUID().uuidString,
            attributes: attributes,
            data: key.privateKeyOwner?.privateKeyRawRepresentation ?? key.publicKey.rawRepresentation,
            reference: key
        )
        item.attributes.merge(derived) { given, _ in given }
        for name in KeychainClass.key.derivedAttributes { item.attributes[name] = derived[name] }
        return item
    }

    // MARK: - Update and delete

    func update(_ query: KeychainQuery, with changes: KeychainQuery) throws(KeychainFailure) {
        guard changes.itemClass == nil, changes.returns.isEmpty, !changes.limitGiven, changes.valueReference == nil,
            changes.persistentReference == nil
        else {
            throw KeychainFailure(
                errSecParam,
                "attributesToUpdate holds attributes and kSecValueData only (no kSecClass, kSecReturn…, kSecMatch… or kSecValueRef)"
            )
        }
        let matched = try search(query)
        for itemClass in Set(matched.map(\.itemClass)) {
            if let name = changes.attributes.keys.first(where: itemClass.derivedAttributes.contains) {
                throw KeychainFailure(errSecParam, "\(name) is read from the item itself and cannot be changed")
            }
        }
        try change(matched) { item throws(KeychainFailure) in
            var item = item
            item.attributes.merge(changes.attributes) { _, new in new }
            if let synchronizable = changes.synchronizable {
                guard synchronizable != .any else {
                    throw KeychainFailure(errSecParam, "kSecAttrSynchronizableAny is for searches")
                }
                item.attributes[kSecAttrSynchronizable as String] = .bool(synchronizable == .yes)
            }
            if let data = changes.valueData {
                guard item.itemClass == .genericPassword || item.itemClass == .internetPassword else {
                    throw KeychainFailure(errSecParam, "kSecValueData changes only a password item")
                }
                item.data = data
            }
            item.attributes[kSecAttrModificationDate as String] = .date(Date())
            return item
        }
    }

    func delete(_ query: KeychainQuery) throws(KeychainFailure) {
        var query = query
        query.limit = nil
        try change(try search(query)) { _ throws(KeychainFailure) in nil }
    }

    /// Applies `transform` (nil: remove) to `matched`, class by class; an identity is its
    /// certificate and its key.
    private func change(
        _ matched: [KeychainItem],
        _ transform: (KeychainItem) throws(KeychainFailure) -> KeychainItem?
    ) throws(KeychainFailure) {
        var targets: [KeychainClass: Set<String>] = [:]
        for item in matched {
            if item.itemClass == .identity {
                let parts = item.id.split(separator: "+", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                targets[.certificate, default: []].insert(parts[0])
                targets[.key, default: []].insert(parts[1])
            } else {
                targets[item.itemClass, default: []].insert(item.id)
            }
        }
        for (itemClass, ids) in targets.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            try store.modify(itemClass) { items throws(KeychainFailure) in
                var result: [KeychainItem] = []
                for item in items {
                    guard ids.contains(item.id) else {
                        result.append(item)
                        continue
                    }
                    if let changed = try transform(item) { result.append(changed) }
                }
                try Self.requireUniquePrimaryKeys(result)
                return result
            }
        }
    }

    private static func requireUniquePrimaryKeys(_ items: [KeychainItem]) throws(KeychainFailure) {
        var seen: [[KeychainValue?]] = []
        for item in items {
            let key = item.primaryKey
            if seen.contains(key) {
                throw KeychainFailure(errSecDuplicateItem, "the change would give two items the same primary key")
            }
            seen.append(key)
        }
    }
}
