// swift-tools-version:6.0
import PackageDescription

// Strict checks beyond the language mode (`-require-explicit-sendable`, warnings as errors) are
// passed by `.ci/run` on the command line: unsafe flags here would stop other packages from
// depending on Sesame.
let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
]

let package = Package(
    name: "Sesame",
    products: [
        .library(name: "Sesame", targets: ["Sesame"]),
        .library(name: "SesameTesting", targets: ["SesameTesting"]),
        .library(name: "SesameNetworking", targets: ["SesameNetworking"]),
        .library(name: "SesameAFNetworking", targets: ["SesameAFNetworking"]),
        .executable(name: "sesame", targets: ["sesame"]),
        .executable(name: "sesame-bench", targets: ["sesame-bench"]),
        .executable(name: "sesame-bench-worker", targets: ["sesame-bench-worker"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        .systemLibrary(
            name: "CBrotli",
            pkgConfig: "libbrotlidec",
            providers: [.apt(["libbrotli-dev"])]
        ),
        .target(
            name: "CSesameShims",
            dependencies: ["COpenSSL", "CZlib"]
        ),
        .target(
            name: "Sesame",
            dependencies: ["COpenSSL", "CZlib", "CBrotli", "CNGHTTP2", "CSesameShims"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "SesameNetworking",
            dependencies: ["Sesame", "COpenSSL"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "SesameAFNetworking",
            dependencies: ["Sesame", "SesameNetworking"],
            swiftSettings: strictSwift
        ),
        .target(
            name: "SesameTesting",
            dependencies: ["Sesame", "COpenSSL", "CSesameShims"],
            swiftSettings: strictSwift
        ),
        // In release builds the command-line tool carries the Swift runtime inside it: a script
        // that runs it thousands of times does not pay for binding and relocating the runtime's
        // shared libraries at every start, and the binary runs where no Swift toolchain is
        // installed. Debug builds (the tests, the sanitizers) keep the shared runtime, which the
        // sanitizers' runtimes expect. No package depends on an executable product, so these
        // flags stop no one depending on Sesame's libraries.
        .executableTarget(
            name: "sesame",
            dependencies: ["Sesame", "SesameTesting"],
            swiftSettings: strictSwift,
            linkerSettings: [
                .unsafeFlags(
                    ["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims"],
                    .when(configuration: .release)
                )
            ]
        ),
        .executableTarget(
            name: "sesame-bench",
            dependencies: ["Sesame", "SesameTesting"],
            swiftSettings: strictSwift
        ),
        // Sesame's client in the benchmark: Sesame and FoundationEssentials only, as a program
        // built on Sesame's API would link.
        .executableTarget(
            name: "sesame-bench-worker",
            dependencies: ["Sesame"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SesameTests",
            dependencies: ["Sesame", "SesameTesting", "COpenSSL", "CZlib", "CNGHTTP2", "CSesameShims"],
            // Read through #filePath by the conformance runner, not bundled.
            exclude: ["Trust/Limbo/limbo.json", "Trust/Limbo/openssl-3.0-baseline.json", "Trust/Limbo/NOTICE.md"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            // App code as it is written for Apple's platforms: Swift 5, NSObject delegates, no
            // Sendable annotations, only `import SesameNetworking` for the URL loading system.
            name: "SesameNetworkingTests",
            dependencies: ["SesameNetworking", "SesameTesting", "Sesame"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            // App code written in the Swift 6 language mode: Sendable delegates, main-actor
            // models, `@Sendable` handlers, against the same `import SesameNetworking`.
            name: "SesameNetworkingSwift6Tests",
            dependencies: ["SesameNetworking", "SesameTesting"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            // AFNetworking code as it is written: Swift 5, `import SesameAFNetworking` only.
            name: "SesameAFNetworkingTests",
            dependencies: ["SesameAFNetworking", "SesameTesting"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "SesameSoakTests",
            dependencies: ["Sesame", "SesameTesting"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "SesameIntegrationTests",
            dependencies: ["Sesame", "SesameTesting"],
            swiftSettings: strictSwift
        ),
    ]
)
