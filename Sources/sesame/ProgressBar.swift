import FoundationEssentials
import Glibc

/// A one-line progress bar on standard error, redrawn at most ten times a second.
final class ProgressBar {
    private let expected: Int?
    private var received = 0
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private let started = ContinuousClock.now

    init(expected: Int?) { self.expected = expected }

    func advance(by count: Int) {
        received += count
        let now = ContinuousClock.now
        guard now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = now
        draw()
    }

    func finish() {
        guard received > 0 else { return }
        draw()
        Output.standardError("\n")
    }

    private func draw() {
        let elapsed = max(
            0.001,
            Double((ContinuousClock.now - started).components.seconds) + Double(
                (ContinuousClock.now - started).components.attoseconds
            ) / 1e18
        )
        let rate = Self.size(Int(Double(received) / elapsed)) + "/s"
        let line: String
        if let expected, expected > 0 {
            let fraction = min(1, Double(received) / Double(expected))
            let filled = Int(fraction * 30)
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
            line = "[\(bar)] \(Int(fraction * 100))% \(Self.size(received)) of \(Self.size(expected)) \(rate)"
        } else {
            line = "\(Self.size(received)) \(rate)"
        }
        Output.standardError("\r\u{1B}[K\(line)")
    }

    static func size(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        guard unit > 0 else { return "\(bytes) B" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
