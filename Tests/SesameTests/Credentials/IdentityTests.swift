import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct IdentityTests {
    let pki = sharedPKI

    @Test(arguments: [false, true])
    func pkcs12FromTheTestPKILoads(legacy: Bool) throws {
        let client = try pki.clientCertificate(commonName: "p12-\(legacy)", key: .rsa2048)
        let path = try temporaryDirectory().appendingPathComponent("client.p12").path
        try client.pkcs12(password: "test-pass", legacy: legacy).write(to: URL(fileURLWithPath: path))
        let identity = try Identity.load(pkcs12File: path, password: "test-pass")
        #expect(identity.certificate == client.certificate)
        #expect(identity.certificate.subject.commonName == "p12-\(legacy)")
    }

    @Test(arguments: ["", "-legacy"])
    func pkcs12WrittenByTheOpenSSLCommandLineLoads(flag: String) throws {
        // `-legacy` uses RC2-40 for the certificates, which OpenSSL 3 keeps in its legacy provider.
        let client = try pki.clientCertificate(commonName: "cli\(flag)", issuer: pki.intermediate)
        let directory = try temporaryDirectory()
        let (certificate, key) = try client.write(to: directory, name: "client")
        let path = directory.appendingPathComponent("client.p12").path
        try shell(
            "openssl pkcs12 -export \(flag) -in '\(certificate)' -inkey '\(key)' -passout pass:s3cret -out '\(path)'"
        )
        let identity = try Identity.load(pkcs12File: path, password: "s3cret")
        #expect(identity.certificate == client.certificate)
        #expect(identity.intermediates == [pki.intermediate.certificate])
    }

    @Test func aWrongPKCS12PasswordIsNamed() throws {
        let path = try temporaryDirectory().appendingPathComponent("client.p12").path
        try pki.clientCertificate().pkcs12(password: "right").write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: SesameError.self) { try Identity.load(pkcs12File: path, password: "wrong") }
        #expect(error?.code == .wrongPassword)
        #expect(error?.detail.contains(path) == true)
        #expect(error?.detail.contains("right") == false)
    }

    @Test func truncatedAndForeignPKCS12FilesAreNamed() throws {
        let directory = try temporaryDirectory()
        let p12 = try pki.clientCertificate().pkcs12(password: "x")
        let truncated = directory.appendingPathComponent("truncated.p12").path
        try p12.prefix(p12.count / 2).write(to: URL(fileURLWithPath: truncated))
        let pem = directory.appendingPathComponent("cert.pem").path
        try Data(pki.root.certificatePEM.utf8).write(to: URL(fileURLWithPath: pem))
        let missing = directory.appendingPathComponent("none.p12").path

        for (path, code) in [
            (truncated, SesameError.Code.invalidPKCS12), (pem, .invalidPKCS12), (missing, .fileUnreadable),
        ] {
            let error = #expect(throws: SesameError.self) { try Identity.load(pkcs12File: path, password: "x") }
            #expect(error?.code == code)
            #expect(error?.detail.contains(path) == true)
        }
    }

    @Test func pemCertificateAndKeyLoad() throws {
        let client = try pki.clientCertificate(commonName: "pem", issuer: pki.intermediate)
        let (certificate, key) = try client.write(to: try temporaryDirectory(), name: "client")
        let identity = try Identity.load(certificateFile: certificate, keyFile: key)
        #expect(identity.certificate == client.certificate)
        #expect(identity.intermediates == [pki.intermediate.certificate])
    }

    @Test func encryptedPEMKeysNeedTheRightPassword() throws {
        let client = try pki.clientCertificate(commonName: "encrypted")
        let directory = try temporaryDirectory()
        let (certificate, _) = try client.write(to: directory, name: "client")
        let keyPath = directory.appendingPathComponent("encrypted.key").path
        try Data(client.encryptedPrivateKeyPEM(password: "pem-pass").utf8).write(to: URL(fileURLWithPath: keyPath))

        let identity = try Identity.load(certificateFile: certificate, keyFile: keyPath, password: "pem-pass")
        #expect(identity.certificate == client.certificate)

        let wrong = #expect(throws: SesameError.self) {
            try Identity.load(certificateFile: certificate, keyFile: keyPath, password: "nope")
        }
        #expect(wrong?.code == .wrongPassword)
        #expect(wrong?.detail.contains(keyPath) == true)

        let none = #expect(throws: SesameError.self) {
            try Identity.load(certificateFile: certificate, keyFile: keyPath)
        }
        #expect(none?.code == .wrongPassword)
        #expect(none?.detail.contains("no password was given") == true)
    }

    @Test func traditionalEncryptedRSAKeysFromTheCommandLineLoad() throws {
        let client = try pki.clientCertificate(commonName: "traditional", key: .rsa2048)
        let directory = try temporaryDirectory()
        let (certificate, key) = try client.write(to: directory, name: "client")
        let traditional = directory.appendingPathComponent("traditional.key").path
        try shell("openssl rsa -in '\(key)' -traditional -aes128 -passout pass:old -out '\(traditional)' 2>/dev/null")
        let identity = try Identity.load(certificateFile: certificate, keyFile: traditional, password: "old")
        #expect(identity.certificate == client.certificate)
    }

    @Test func aKeyThatDoesNotMatchIsNamed() throws {
        let directory = try temporaryDirectory()
        let (certificate, _) = try pki.clientCertificate(commonName: "one").write(to: directory, name: "one")
        let (_, otherKey) = try pki.clientCertificate(commonName: "two").write(to: directory, name: "two")
        let error = #expect(throws: SesameError.self) {
            try Identity.load(certificateFile: certificate, keyFile: otherKey)
        }
        #expect(error?.code == .keyMismatch)
        #expect(error?.detail.contains(otherKey) == true)
    }

    @Test func aDamagedKeyIsNamed() throws {
        let client = try pki.clientCertificate()
        let directory = try temporaryDirectory()
        let (certificate, _) = try client.write(to: directory, name: "client")
        let damaged = directory.appendingPathComponent("damaged.key").path
        var text = client.privateKeyPEM
        let middle = text.index(text.startIndex, offsetBy: 60)
        text.replaceSubrange(middle...text.index(middle, offsetBy: 10), with: "!!!!!!!!!!!")
        try Data(text.utf8).write(to: URL(fileURLWithPath: damaged))
        let error = #expect(throws: SesameError.self) {
            try Identity.load(certificateFile: certificate, keyFile: damaged)
        }
        #expect(error?.code == .invalidPrivateKey)
        #expect(error?.detail.contains(damaged) == true)

        let certificateAsKey = #expect(throws: SesameError.self) {
            try Identity.load(certificateFile: certificate, keyFile: certificate)
        }
        #expect(certificateAsKey?.code == .invalidPrivateKey)
    }
}
