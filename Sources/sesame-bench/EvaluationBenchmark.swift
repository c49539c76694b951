import Foundation
import Sesame
import SesameTesting

/// `sesame-bench --evaluations`: the cost of evaluating a three-certificate chain (leaf,
/// intermediate, private root) with CertificateChainEvaluator, no cache: 10,000 evaluations per
/// repetition, the time per evaluation printed as median and range. No curl ratio: nothing to
/// compare with but an earlier build (run this mode on both, on the same machine).
enum EvaluationBenchmark {
    static func run(repetitions: Int, evaluations: Int = 10_000) throws {
        let pki = try TestPKI()
        let leaf = try pki.leaf()
        let chain = [leaf.certificate] + leaf.intermediates
        let roots = TrustRoots.anchors([pki.root.certificate])
        // Warm up: the store, OpenSSL's method tables.
        for _ in 0..<200 { _ = CertificateChainEvaluator.evaluate(chain: chain, roots: roots, host: "localhost") }
        var perEvaluation: [Double] = []
        for _ in 0..<repetitions {
            let clock = ContinuousClock()
            var trusted = 0
            let elapsed = clock.measure {
                for _ in 0..<evaluations {
                    if CertificateChainEvaluator.evaluate(chain: chain, roots: roots, host: "localhost").isTrusted {
                        trusted += 1
                    }
                }
            }
            guard trusted == evaluations else { throw BenchmarkError("the benchmark chain was not trusted") }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            perEvaluation.append(seconds / Double(evaluations) * 1e6)
        }
        let sorted = perEvaluation.sorted()
        let median = sorted[sorted.count / 2]
        print(
            String(
                format: "three-certificate chain, %d evaluations × %d: median %.1f µs per evaluation (range %.1f–%.1f)",
                evaluations,
                repetitions,
                median,
                sorted.first ?? 0,
                sorted.last ?? 0
            )
        )
    }
}
