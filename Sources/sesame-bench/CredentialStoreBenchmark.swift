import Foundation
import Sesame
import SesameTesting

/// `sesame-bench --credential-stores`: what a permanent credential costs in each store, the
/// keyring (GNOME Keyring on a private session bus, ``SecretServicePeer``) and the file, both
/// holding 20 spaces: a save, the default-credential lookup a challenge makes, and reading every
/// entry. Median and range in microseconds. No curl ratio: nothing to compare with but each other.
enum CredentialStoreBenchmark {
    static func run(repetitions: Int) async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        // This process talks to that bus only (set before libsecret's first use).
        for (name, value) in keyring.environment where name == "DBUS_SESSION_BUS_ADDRESS" { setenv(name, value, 1) }
        let folder = try ScratchFolder.make("bench-store")
        let stores: [(String, any CredentialStore)] = [
            ("Secret Service (GNOME Keyring)", try SecretServiceCredentialStore()),
            ("file", FileCredentialStore(fileURL: folder.appendingPathComponent("credentials.json"))),
        ]
        for (name, store) in stores {
            let storage = CredentialStorage(store: store)
            let spaces = (0..<20).map {
                ProtectionSpace(
                    host: "h\($0).example",
                    port: 443,
                    protocol: "https",
                    realm: "R",
                    authenticationMethod: .httpBasic
                )
            }
            for (index, space) in spaces.enumerated() {
                try storage.setDefaultCredential(
                    Credential(user: "u\(index)", password: "p\(index)", persistence: .permanent),
                    for: space
                )
            }
            let count = 25 * repetitions
            let save = try measure(count) {
                try storage.set(Credential(user: "x", password: "y", persistence: .permanent), for: spaces[3])
            }
            let lookup = try measure(count * 4) {
                guard try storage.defaultCredential(for: spaces[7])?.user == "u7" else {
                    throw BenchmarkError("the stored default was not found")
                }
            }
            let all = try measure(count) { _ = try storage.allCredentials }
            print("\(name): save \(save); default lookup \(lookup); every entry (21) \(all)")
        }
    }

    private static func measure(_ count: Int, _ body: () throws -> Void) throws -> String {
        var samples: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<count {
            let elapsed = try clock.measure(body)
            samples.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
        }
        samples.sort()
        return String(
            format: "median %.0f µs (range %.0f–%.0f, %d runs)",
            samples[samples.count / 2],
            samples.first ?? 0,
            samples.last ?? 0,
            count
        )
    }
}
