import Foundation
import Sesame

/// A SecItem function's dictionary, read once: the class, the attributes to match or set, the
/// values, what to return and how many.
struct KeychainQuery {
    enum Synchronizable { case no, yes, any }
    enum Return: CaseIterable { case data, attributes, reference, persistentReference }

    var itemClass: KeychainClass?
    /// Attributes to match (a search) or to set (an add or update), without `kSecAttrSynchronizable`.
    var attributes: [String: KeychainValue] = [:]
    var synchronizable: Synchronizable?
    var valueData: Data?
    var valueReference: AnyObject?
    var persistentReference: Data?
    var returns: Set<Return> = []
    /// How many items a search returns at most; nil for all.
    var limit: Int? = 1
    var ignoringCase = false
    var itemList: [AnyObject]?
    var subjectContains: String?
    var validOnDate: Date?
    /// Whether `kSecMatchLimit` was given (an explicit `kSecMatchLimitAll` asks for an array).
    var limitGiven = false

    /// A query holding only a `kSecValueRef`.
    init(reference: AnyObject) {
        valueReference = reference
    }

    /// Reads `dictionary`; `kSecClass` is inferred from a `kSecValueRef` when absent.
    init(_ dictionary: CFDictionary) throws(KeychainFailure) {
        for (rawKey, value) in dictionary {
            guard let key = (rawKey as? String) ?? (rawKey as? NSString).map({ $0 as String }) else {
                throw KeychainFailure(errSecParam, "a key of the dictionary is not a string: \(rawKey)")
            }
            try read(key, value)
        }
        if itemClass == nil {
            switch valueReference {
            case is SecCertificate: itemClass = .certificate
            case is SecKey: itemClass = .key
            case is SecIdentity: itemClass = .identity
            default: break
            }
        }
    }

    private mutating func read(_ key: String, _ value: Any) throws(KeychainFailure) {
        switch key {
        case name(kSecClass):
            guard let name = KeychainValue(value)?.text, let itemClass = KeychainClass(rawValue: name) else {
                throw KeychainFailure(errSecParam, "kSecClass \(value) is not a keychain item class")
            }
            self.itemClass = itemClass
        case name(kSecValueData):
            guard case .data(let bytes) = KeychainValue(value) else {
                throw KeychainFailure(errSecParam, "kSecValueData must be Data")
            }
            valueData = bytes
        case name(kSecValueRef):
            valueReference = value as AnyObject
        case name(kSecValuePersistentRef):
            guard case .data(let bytes) = KeychainValue(value) else {
                throw KeychainFailure(errSecParam, "kSecValuePersistentRef must be Data")
            }
            persistentReference = bytes
        case name(kSecReturnData), name(kSecReturnAttributes), name(kSecReturnRef),
            name(kSecReturnPersistentRef):
            guard let flag = KeychainValue(value)?.integer else {
                throw KeychainFailure(errSecParam, "\(key) must be a Boolean")
            }
            let kind: Return =
                switch key {
                case name(kSecReturnData): .data
                case name(kSecReturnAttributes): .attributes
                case name(kSecReturnRef): .reference
                default: .persistentReference
                }
            if flag != 0 { returns.insert(kind) } else { returns.remove(kind) }
        case name(kSecMatchLimit):
            limitGiven = true
            switch KeychainValue(value) {
            case .string(name(kSecMatchLimitOne)): limit = 1
            case .string(name(kSecMatchLimitAll)): limit = nil
            case .number(let count) where count > 0: limit = Int(count)
            default: throw KeychainFailure(errSecParam, "kSecMatchLimit \(value) is not a limit")
            }
        case name(kSecMatchCaseInsensitive):
            ignoringCase = KeychainValue(value)?.integer == 1
        case name(kSecMatchItemList):
            guard let list = value as? [AnyObject] ?? (value as? NSArray).map({ $0.map { $0 as AnyObject } }) else {
                throw KeychainFailure(errSecParam, "kSecMatchItemList must be an array of items")
            }
            itemList = list
        case name(kSecMatchSubjectContains):
            guard let text = KeychainValue(value)?.text else {
                throw KeychainFailure(errSecParam, "kSecMatchSubjectContains must be a string")
            }
            subjectContains = text
        case name(kSecMatchValidOnDate):
            if value is NSNull {
                validOnDate = Date()
            } else if case .date(let date) = KeychainValue(value) {
                validOnDate = date
            } else {
                throw KeychainFailure(errSecParam, "kSecMatchValidOnDate must be a date or NSNull")
            }
        case name(kSecAttrSynchronizable):
            switch KeychainValue(value) {
            case .string(name(kSecAttrSynchronizableAny)): synchronizable = .any
            case let flag? where flag.integer != nil: synchronizable = flag.integer == 0 ? .no : .yes
            default:
                throw KeychainFailure(
                    errSecParam,
                    "kSecAttrSynchronizable must be a Boolean or kSecAttrSynchronizableAny"
                )
            }
        case name(kSecAttrAccessControl), name(kSecUseDataProtectionKeychain):
            break  // Linux has no access-control lists or data-protection classes: accepted, without effect.
        case _ where key.hasPrefix("u_"):
            break  // kSecUse…: prompts and authentication contexts, without effect on Linux.
        case _ where key.hasPrefix("m_"), _ where key.hasPrefix("r_"), _ where key.hasPrefix("v_"):
            throw KeychainFailure(errSecParam, "\(key) is not a key Sesame's Keychain Services know")
        default:
            guard let attribute = KeychainValue(value) else {
                throw KeychainFailure(errSecParam, "the value of \(key) is not a string, data, number, Boolean or date")
            }
            attributes[key] = attribute
        }
    }

    /// Whether `item` is one this search selects.
    func selects(_ item: KeychainItem) -> Bool {
        let flag = item.attributes[kSecAttrSynchronizable as String]?.integer ?? 0
        switch synchronizable ?? .no {
        case .no: if flag != 0 { return false }
        case .yes: if flag == 0 { return false }
        case .any: break
        }
        for (name, wanted) in attributes {
            guard let value = item.attributes[name], value.matches(wanted, ignoringCase: ignoringCase) else {
                return false
            }
        }
        if let persistentReference, persistentReference != item.persistentReference { return false }
        if let valueReference, !Self.same(item.reference, valueReference) { return false }
        if let itemList {
            let listed = itemList.contains { listed in
                if let reference = listed as? Data ?? (listed as? NSData).map({ $0 as Data }) {
                    return reference == item.persistentReference
                }
                return Self.same(item.reference, listed)
            }
            if !listed { return false }
        }
        if subjectContains != nil || validOnDate != nil {
            guard let certificate = Self.certificate(of: item) else { return false }
            if let subjectContains,
                !certificate.subject.description.localizedCaseInsensitiveContains(subjectContains)
            {
                return false
            }
            if let validOnDate,
                !(certificate.notValidBefore...certificate.notValidAfter).contains(validOnDate)
            {
                return false
            }
        }
        return true
    }

    /// Whether an item's object is `other` (equal certificates, keys, identities).
    private static func same(_ reference: AnyObject?, _ other: AnyObject) -> Bool {
        guard let reference = reference as? NSObject else { return false }
        return reference.isEqual(other)
    }

    private static func certificate(of item: KeychainItem) -> Certificate? {
        switch item.reference {
        case let certificate as SecCertificate: certificate.certificate
        case let identity as SecIdentity: identity.identity.certificate
        default: nil
        }
    }

    /// What a search returns for `items` (already matched and limited): one value, a dictionary
    /// of several, or an array of them when more than one item may be returned.
    func result(for items: [KeychainItem]) -> AnyObject? {
        guard !returns.isEmpty else { return nil }
        let values = items.map(value(of:))
        if limit == 1 { return values.first }
        return values as NSArray
    }

    private func value(of item: KeychainItem) -> AnyObject {
        if returns.count == 1, let only = returns.first {
            switch only {
            case .data: return (item.data ?? Data()) as NSData
            case .attributes: return item.attributeDictionary as NSDictionary
            case .reference: return item.reference ?? NSNull()
            case .persistentReference: return item.persistentReference as NSData
            }
        }
        var dictionary: [String: AnyObject] = returns.contains(.attributes) ? item.attributeDictionary : [:]
        if returns.contains(.data), let data = item.data { dictionary[kSecValueData as String] = data as NSData }
        if returns.contains(.reference), let reference = item.reference {
            dictionary[kSecValueRef as String] = reference
        }
        if returns.contains(.persistentReference) {
            dictionary[kSecValuePersistentRef as String] = item.persistentReference as NSData
        }
        return dictionary as NSDictionary
    }
}

/// A constant's text, for `case` patterns (where `as String` would read as a cast).
private func name(_ constant: CFString) -> String { constant as String }
