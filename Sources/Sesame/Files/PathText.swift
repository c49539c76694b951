/// File paths taken apart as text, as `NSString`'s path methods do it (no file system access).
enum PathText {
    /// `path` without trailing slashes (but `/` stays `/`).
    private static func trimmed(_ path: String) -> Substring {
        var text = Substring(path)
        while text.count > 1, text.hasSuffix("/") { text = text.dropLast() }
        return text
    }

    /// The last component: `/a/b.txt` → `b.txt`, `/a/b/` → `b`, `/` → `/`.
    static func lastComponent(_ path: String) -> String {
        let text = trimmed(path)
        guard text != "/", let slash = text.lastIndex(of: "/") else { return String(text) }
        return String(text[text.index(after: slash)...])
    }

    /// The path without its last component: `/a/b.txt` → `/a`, `/a` → `/`, `b.txt` → ``.
    static func deletingLastComponent(_ path: String) -> String {
        let text = trimmed(path)
        guard text != "/", let slash = text.lastIndex(of: "/") else { return text == "/" ? "/" : "" }
        var parent = text[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : String(parent)
    }

    /// The extension of the last component without its dot (`b.tar.gz` → `gz`), or `` when it
    /// has none (a leading dot, as in `.netrc`, starts a name, not an extension).
    static func pathExtension(_ path: String) -> String {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}
