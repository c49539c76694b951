import Foundation
import Testing

/// Every Swift sample in the DocC articles must appear in DocSamples.swift, which compiles with
/// the library: a sample that stops compiling fails the build, one edited only in the article
/// fails here.
@Suite struct DocSampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Whitespace, trailing commas (which the formatter adds) and imports do not count.
    static func normalized(_ code: String) -> String {
        let lines = code.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("import ") }
        var text = lines.joined(separator: "\n").filter { !$0.isWhitespace }
        text = text.replacingOccurrences(of: ",]", with: "]").replacingOccurrences(of: ",)", with: ")")
        return text
    }

    static func samples(in markdown: String) -> [String] {
        var samples: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
            } else if current != nil, trimmed == "```" {
                samples.append(current?.joined(separator: "\n") ?? "")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return samples
    }

    @Test func everyArticleSampleIsCompiled() throws {
        let catalog = Self.root.appendingPathComponent("Sources/Sesame/Docs.docc")
        let compiled = Self.normalized(
            try String(
                contentsOf: Self.root.appendingPathComponent("Tests/SesameTests/Docs/DocSamples.swift"),
                encoding: .utf8
            )
        )
        let articles = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }
        #expect(articles.count >= 7)
        var count = 0
        for article in articles {
            let text = try String(contentsOf: catalog.appendingPathComponent(article), encoding: .utf8)
            for sample in Self.samples(in: text) {
                count += 1
                #expect(
                    compiled.contains(Self.normalized(sample)),
                    "\(article): sample not in DocSamples.swift:\n\(sample)"
                )
            }
        }
        #expect(count >= 10)
    }

    @Test func everyReadmeSampleIsCompiled() throws {
        let compiled = Self.normalized(
            try String(
                contentsOf: Self.root.appendingPathComponent("Tests/SesameTests/Docs/DocSamples.swift"),
                encoding: .utf8
            )
        )
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let samples = Self.samples(in: readme)
        #expect(samples.count >= 3)
        for sample in samples {
            #expect(compiled.contains(Self.normalized(sample)), "README.md: sample not in DocSamples.swift:\n\(sample)")
        }
    }
}
