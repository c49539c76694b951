extension StringProtocol {
    /// The text without the spaces and tabs at either end (Unicode space separators and
    /// horizontal tab, what Foundation's `CharacterSet.whitespaces` holds; line breaks stay).
    package func trimmingWhitespace() -> String {
        trimming { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
    }

    /// The text without the scalars in `set` at either end.
    package func trimming(_ set: Set<Unicode.Scalar>) -> String {
        trimming { set.contains($0) }
    }

    /// The text without the scalars `isTrimmed` accepts at either end.
    package func trimming(where isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }) else { return "" }
        // safe: a scalar that is not trimmed exists, so the last one does too.
        let last = scalars.lastIndex(where: { !isTrimmed($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
