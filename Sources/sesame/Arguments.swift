/// curl-style command-line arguments: `-X VALUE`, `-XVALUE`, `--name VALUE`, `--name=VALUE`, and
/// combined short switches such as `-sSL`.
struct Arguments {
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// Options that take a value, by every spelling.
    let valued: Set<String>
    /// Options that do not.
    let switches: Set<String>

    enum Item: Equatable {
        case option(String, String?)
        case positional(String)
    }

    func parse(_ arguments: [String]) throws -> [Item] {
        var items: [Item] = []
        var index = 0
        func value(for name: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "option \(name) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                items += arguments[(index + 1)...].map(Item.positional)
                break
            }
            if argument.hasPrefix("--") {
                let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
                let name = parts[0]
                if valued.contains(name) {
                    items.append(.option(name, parts.count == 2 ? parts[1] : try value(for: name)))
                } else if switches.contains(name), parts.count == 1 {
                    items.append(.option(name, nil))
                } else {
                    throw UsageError(description: "unknown option \(name)")
                }
            } else if argument.hasPrefix("-") && argument.count > 1 {
                var letters = Array(argument.dropFirst())
                while let letter = letters.first {
                    let name = "-\(letter)"
                    letters.removeFirst()
                    if valued.contains(name) {
                        items.append(.option(name, letters.isEmpty ? try value(for: name) : String(letters)))
                        break
                    } else if switches.contains(name) {
                        items.append(.option(name, nil))
                    } else {
                        throw UsageError(description: "unknown option \(name)")
                    }
                }
            } else {
                items.append(.positional(argument))
            }
            index += 1
        }
        return items
    }
}
