import Foundation

extension timeval {
    var seconds: Double { Double(tv_sec) + Double(tv_usec) / 1e6 }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
