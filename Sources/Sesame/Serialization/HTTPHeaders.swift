/// HTTP header fields: names compare case-insensitively; order and repeats are kept as received.
public struct HTTPHeaders: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One field as received or to be sent.
    public struct Field: Hashable, Sendable {
        /// The field name, as given (compared without case).
        public let name: String
        /// The field value, as given.
        public let value: String
        /// A field named `name` with `value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private(set) var fields: [Field] = []

    /// No fields.
    public init() {}

    /// These name and value pairs, in order; repeated names are kept as separate fields.
    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { Field(name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// The number of fields.
    public var count: Int { fields.count }

    /// True when there is no field.
    public var isEmpty: Bool { fields.isEmpty }

    /// Makes room for `count` fields without growing again.
    mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// Appends `text` to the value of the last field (an obs-fold continuation line).
    mutating func appendToLastValue(_ text: String) {
        guard let last = fields.popLast() else { return }
        fields.append(Field(name: last.name, value: last.value + text))
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        var values: [String] = []
        for field in fields where field.name.caseInsensitiveEquals(name) { values.append(field.value) }
        return values
    }

    /// The first value of `name`.
    public func first(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// The values of `name` joined with ", " (RFC 9110 section 5.3), or nil.
    public subscript(name: String) -> String? {
        let all = values(for: name)
        return all.isEmpty ? nil : all.joined(separator: ", ")
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool { fields.contains { $0.name.caseInsensitiveEquals(name) } }

    /// Adds a field after the others (repeats are allowed).
    public mutating func add(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// Replaces every field named `name` with one field.
    public mutating func replaceOrAdd(name: String, value: String) {
        guard let first = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) else {
            fields.append(Field(name: name, value: value))
            return
        }
        var kept: [Field] = []
        for (index, field) in fields.enumerated() {
            if index == first {
                kept.append(Field(name: field.name, value: value))
            } else if !field.name.caseInsensitiveEquals(name) {
                kept.append(field)
            }
        }
        fields = kept
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) {
        // `removeAll(where:)` copies an array shared with another value even when nothing matches.
        guard contains(name) else { return }
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}

extension StringProtocol {
    func caseInsensitiveEquals<Other: StringProtocol>(_ other: Other) -> Bool {
        guard utf8.count == other.utf8.count else { return false }  // O(1) for native strings
        // Native strings: compare their bytes in place (header lookups run this for every field).
        let compared = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in equalsIgnoringASCIICase(mine, theirs) }
        }
        if let compared = compared ?? nil { return compared }
        var mine = utf8.makeIterator()
        var theirs = other.utf8.makeIterator()
        while true {
            switch (mine.next(), theirs.next()) {
            case (nil, nil): return true
            case (let a?, let b?) where a == b || asciiLower(a) == asciiLower(b): continue
            default: return false
            }
        }
    }

    func trimmingSpaces() -> String {
        // Spaces and tabs are ASCII, so UTF-8 positions next to them are character boundaries.
        var start: String.Index?
        var end = startIndex
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            let next = utf8.index(after: index)
            if byte != 0x20 && byte != 0x09 {
                if start == nil { start = index }
                end = next  // after a whole scalar once the loop ends: the last byte is never in the middle
            }
            index = next
        }
        guard let start else { return "" }
        return String(self[start..<end])
    }
}

@inline(__always) func asciiLower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte | 0x20 : byte }
