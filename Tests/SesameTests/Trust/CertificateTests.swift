import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct CertificateTests {
    let pki = sharedPKI

    @Test func derAndPEMRoundTrip() throws {
        let leaf = try pki.leaf().certificate
        #expect(try Certificate(derEncoded: leaf.derEncoded) == leaf)
        #expect(try Certificate(pemEncoded: leaf.pemEncoded) == leaf)
        #expect(leaf.pemEncoded.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
    }

    @Test func fieldsAreRead() throws {
        let pki = try TestPKI(now: TestPKI.referenceDate)
        let issued = try pki.leaf(
            commonName: "api.example.test",
            dnsNames: ["api.example.test", "*.cdn.example.test"],
            ipAddresses: ["192.0.2.7", "2001:db8::1"]
        )
        let certificate = issued.certificate
        #expect(certificate.subject.commonName == "api.example.test")
        #expect(certificate.subject.description == "CN=api.example.test,O=Sesame Test")
        #expect(certificate.issuer == pki.intermediate.certificate.subject)
        #expect(
            certificate.subjectAlternativeNames.map(\.description) == [
                "DNS:api.example.test", "DNS:*.cdn.example.test", "IP:192.0.2.7", "IP:2001:db8::1",
            ]
        )
        #expect(certificate.notValidBefore == TestPKI.referenceDate - 86_400)
        #expect(certificate.notValidAfter == TestPKI.referenceDate + 398 * 86_400)
        #expect(!certificate.isCertificateAuthority)
        #expect(pki.root.certificate.isCertificateAuthority)
        #expect(pki.root.certificate.isSelfIssued)
        #expect(certificate.serialNumber.count >= 30)
        #expect(certificate.publicKey.algorithm == "EC P-256")
    }

    @Test func fingerprintAndPinMatchTheOpenSSLCommandLine() throws {
        let certificate = try pki.leaf(key: .rsa2048).certificate
        let directory = try temporaryDirectory()
        let path = directory.appendingPathComponent("leaf.pem").path
        try Data(certificate.pemEncoded.utf8).write(to: URL(fileURLWithPath: path))

        let fingerprint = try shell("openssl x509 -in '\(path)' -noout -fingerprint -sha256")
        let expectedFingerprint = fingerprint.split(separator: "=").last!.replacingOccurrences(of: ":", with: "")
            .lowercased()
        #expect(
            [UInt8](certificate.sha256Fingerprint).hexString()
                == expectedFingerprint.trimmingCharacters(in: .whitespacesAndNewlines)
        )

        let pin = try shell(
            "openssl x509 -in '\(path)' -noout -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"
        )
        #expect(certificate.publicKey.sha256Pin == pin.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(certificate.publicKey.algorithm == "RSA 2048")

        let serial = try shell("openssl x509 -in '\(path)' -noout -serial")
        #expect(serial.lowercased().contains(certificate.serialNumber))
    }

    @Test func aPEMBundleLoadsInOrder() throws {
        let leaf = try pki.leaf()
        let directory = try temporaryDirectory()
        let path = directory.appendingPathComponent("chain.pem").path
        try Data((leaf.chainPEM + pki.root.certificatePEM).utf8).write(to: URL(fileURLWithPath: path))
        let loaded = try Certificate.load(contentsOf: path)
        #expect(loaded == [leaf.certificate, pki.intermediate.certificate, pki.root.certificate])
    }

    @Test func aDERFileLoads() throws {
        let leaf = try pki.leaf().certificate
        let path = try temporaryDirectory().appendingPathComponent("leaf.cer").path
        try leaf.derEncoded.write(to: URL(fileURLWithPath: path))
        #expect(try Certificate.load(contentsOf: path) == [leaf])
    }

    @Test func badInputIsASpecificErrorNamingTheFile() throws {
        let leaf = try pki.leaf()
        let directory = try temporaryDirectory()
        func write(_ name: String, _ data: Data) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try data.write(to: URL(fileURLWithPath: path))
            return path
        }
        let truncatedDER = try write("truncated.der", leaf.certificate.derEncoded.prefix(200))
        let truncatedPEM = try write("truncated.pem", Data(leaf.certificatePEM.utf8.prefix(300)))
        let keyFile = try write("key.pem", Data(leaf.privateKeyPEM.utf8))
        let empty = try write("empty.pem", Data())
        let garbage = try write("garbage.bin", Data("hello, not a certificate".utf8))
        let trailing = try write("trailing.der", leaf.certificate.derEncoded + Data([0, 1, 2]))
        let missing = directory.appendingPathComponent("missing.pem").path

        for (path, code, words) in [
            (truncatedDER, SesameError.Code.invalidCertificate, "not a DER certificate"),
            (truncatedPEM, .invalidCertificate, "damaged or truncated"),
            (keyFile, .invalidCertificate, "no CERTIFICATE block"),
            (empty, .invalidCertificate, "empty"),
            (garbage, .invalidCertificate, "not a DER certificate"),
            (trailing, .invalidCertificate, "trailing data"),
            (missing, .fileUnreadable, "No such file"),
        ] {
            let error = #expect(throws: SesameError.self) { try Certificate.load(contentsOf: path) }
            #expect(error?.code == code, "\(path)")
            #expect(error?.detail.contains(path) == true, "\(String(describing: error))")
            #expect(error?.detail.contains(words) == true, "\(String(describing: error))")
        }
    }

    @Test func distinguishedNamesRoundTripThroughDER() throws {
        let name = pki.clientCA.certificate.subject
        #expect(try DistinguishedName(derEncoded: name.derEncoded) == name)
        #expect(name.commonName == "Sesame Test Client CA")
        #expect(throws: SesameError.self) { try DistinguishedName(derEncoded: Data([1, 2, 3])) }
    }
}

func temporaryDirectory() throws -> URL { try ScratchFolder.make("tests") }

/// Runs a shell command and returns its standard output; throws when it fails.
@discardableResult
func shell(_ command: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw SesameError(.ioError, "\(command) failed: \(String(decoding: errorData, as: UTF8.self))")
    }
    return String(decoding: data, as: UTF8.self)
}
