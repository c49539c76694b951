import Foundation
import SesameNetworking
import SesameTesting
import Testing

/// Security, CoreFoundation and CommonCrypto as app code calls them, with only its imports
/// changed: Apple's key formats, the pinning idiom built on them, `CFString` keys, and
/// CommonCrypto against RFC and NIST vectors.
@Suite struct SecurityAsAppleTests {
    // The ASN.1 headers the widely copied pinning helpers (TrustKit and its copies) prepend.
    static let rsa2048Header: [UInt8] = [
        0x30, 0x82, 0x01, 0x22, 0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05,
        0x00, 0x03, 0x82, 0x01, 0x0F, 0x00,
    ]
    static let ecP256Header: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48,
        0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// The idiom, as apps write it.
    static func applePin(_ certificate: SecCertificate, header: [UInt8]) -> String? {
        guard let key = SecCertificateCopyKey(certificate),
            let raw = SecKeyCopyExternalRepresentation(key, nil)
        else { return nil }
        var keyWithHeader = Data(header)
        keyWithHeader.append(raw as Data)
        var hash = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
        keyWithHeader.withUnsafeBytes { _ = CC_SHA256($0.baseAddress, CC_LONG(keyWithHeader.count), &hash) }
        return Data(hash).base64EncodedString()
    }

    @Test func theCopiedPinningIdiomGetsTheSamePinAsSesame() throws {
        for (key, header) in [(TestPKI.KeyType.ecdsaP256, Self.ecP256Header), (.rsa2048, Self.rsa2048Header)] {
            let leaf = try pki.leaf(key: key)
            let certificate = SecCertificateCreateWithData(nil, der(leaf.certificatePEM) as CFData)!
            #expect(Self.applePin(certificate, header: header) == leaf.certificate.publicKey.sha256Pin, "\(key)")
        }
    }

    @Test func externalRepresentationsAreApplesFormats() throws {
        let ec = try pki.leaf(key: .ecdsaP256)
        let ecKey = SecCertificateCopyKey(SecCertificateCreateWithData(nil, der(ec.certificatePEM) as CFData)!)!
        let point = SecKeyCopyExternalRepresentation(ecKey, nil)! as Data
        #expect(point.count == 65 && point.first == 0x04)
        #expect(ec.certificate.publicKey.spkiDER.suffix(65) == point)

        let rsa = try pki.leaf(key: .rsa2048)
        let rsaKey = SecCertificateCopyKey(SecCertificateCreateWithData(nil, der(rsa.certificatePEM) as CFData)!)!
        let pkcs1 = SecKeyCopyExternalRepresentation(rsaKey, nil)! as Data
        // What `openssl rsa -pubin -RSAPublicKey_out -outform DER` writes for the same key.
        let folder = try ScratchFolder.make("apple-key-formats")
        let spkiFile = folder.appendingPathComponent("key.der")
        try rsa.certificate.publicKey.spkiDER.write(to: spkiFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "rsa", "-pubin", "-inform", "DER", "-in", spkiFile.path, "-RSAPublicKey_out", "-outform", "DER",
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let expected = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(!expected.isEmpty && pkcs1 == expected)

        let attributes = SecKeyCopyAttributes(rsaKey)! as! [String: Any]
        #expect(attributes[kSecAttrKeyType as String] as? String == kSecAttrKeyTypeRSA as String)
        #expect((attributes[kSecAttrKeySizeInBits as String] as? NSNumber)?.intValue == 2048)
        #expect(SecKeyGetBlockSize(rsaKey) == 256)

        // And back: the same keys from Apple's bytes.
        for (bytes, type) in [(pkcs1, kSecAttrKeyTypeRSA), (point, kSecAttrKeyTypeECSECPrimeRandom)] {
            let options: [String: Any] = [
                kSecAttrKeyType as String: type, kSecAttrKeyClass as String: kSecAttrKeyClassPublic,
            ]
            var error: CFError?
            let made = SecKeyCreateWithData(bytes as CFData, options as CFDictionary, &error)
            #expect(made != nil, "\(String(describing: error))")
            #expect(made == (type == kSecAttrKeyTypeRSA ? rsaKey : ecKey))
        }
        var error: CFError?
        let bad = SecKeyCreateWithData(
            Data([0x04, 0x01]) as CFData,
            [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom] as CFDictionary,
            &error
        )
        #expect(bad == nil && error != nil)
    }

    /// The PKCS#12 helper copied into countless client-certificate delegates.
    @Test func thePKCS12HelperCompilesAndReads() throws {
        struct PKCS12 {
            let label: String?
            let keyID: NSData?
            let identity: SecIdentity?
            let chain: [SecCertificate]?

            init(data: Data, password: String) {
                let importPasswordOption: NSDictionary = [kSecImportExportPassphrase as NSString: password]
                var items: CFArray?
                let status = SecPKCS12Import(data as CFData, importPasswordOption, &items)
                guard status == errSecSuccess, let items, CFArrayGetCount(items) > 0 else {
                    (label, keyID, identity, chain) = (nil, nil, nil, nil)
                    return
                }
                let dictionary = unsafeBitCast(CFArrayGetValueAtIndex(items, 0), to: CFDictionary.self)
                func element<T>(for key: CFString) -> T? {
                    (dictionary as? [String: Any])?[key as String] as? T
                }
                label = element(for: kSecImportItemLabel)
                keyID = element(for: kSecImportItemKeyID)
                identity = element(for: kSecImportItemIdentity)
                chain = element(for: kSecImportItemCertChain)
            }
        }
        let client = try pki.clientCertificate(commonName: "helper")
        let imported = PKCS12(data: try client.pkcs12(password: "pw"), password: "pw")
        #expect(imported.identity != nil)
        #expect(imported.label == "helper")
        #expect(imported.keyID?.length == 20)
        #expect(imported.chain?.isEmpty == false)
        let wrong = PKCS12(data: try client.pkcs12(password: "pw"), password: "nope")
        #expect(wrong.identity == nil)
        #expect(SecCopyErrorMessageString(errSecAuthFailed, nil) as String? != nil)
    }

    @Test func aTrustMadeFromCertificatesEvaluatesAgainstItsAnchors() throws {
        let leaf = try pki.leaf()
        let certificates = [leaf.certificatePEM, pki.intermediate.certificatePEM].map {
            SecCertificateCreateWithData(nil, der($0) as CFData)!
        }
        var trust: SecTrust?
        #expect(
            SecTrustCreateWithCertificates(
                certificates as CFArray,
                SecPolicyCreateSSL(true, "localhost" as CFString),
                &trust
            ) == errSecSuccess
        )
        let anchor = SecCertificateCreateWithData(nil, der(pki.root.certificatePEM) as CFData)!
        SecTrustSetAnchorCertificates(trust!, [anchor] as CFArray)
        var error: CFError?
        #expect(SecTrustEvaluateWithError(trust!, &error), "\(String(describing: error))")
        // Revocation that requires a positive answer, with none to be had offline, refuses.
        SecTrustSetPolicies(
            trust!,
            [
                SecPolicyCreateSSL(true, "localhost" as CFString),
                SecPolicyCreateRevocation(kSecRevocationOCSPMethod | kSecRevocationRequirePositiveResponse)!,
            ] as CFArray
        )
        #expect(!SecTrustEvaluateWithError(trust!, &error))
        #expect(SecTrustGetCertificateCount(trust!) == 2)
        var emails: CFArray?
        #expect(SecCertificateCopyEmailAddresses(certificates[0], &emails) == errSecSuccess)
        #expect(emails?.count == 0)
        let data = SecCertificateCopyData(certificates[0])
        #expect(CFDataGetLength(data) == data.length && CFDataGetBytePtr(data)[0] == 0x30)
        #expect(kCFBooleanTrue.boolValue && !kCFBooleanFalse.boolValue)
    }

    /// Request signing as apps write it, checked by `openssl dgst -verify` on the same bytes.
    @Test func signaturesFromAnIdentitysKeyVerifyHereAndInOpenSSL() throws {
        let folder = try ScratchFolder.make("apple-signatures")
        let message = Data("GET /v1/orders\nx-date: 20261204T170000Z".utf8)
        let cases: [(TestPKI.KeyType, SecKeyAlgorithm, [String])] = [
            (.ecdsaP256, .ecdsaSignatureMessageX962SHA256, []),
            (.rsa2048, .rsaSignatureMessagePKCS1v15SHA256, []),
            (
                .rsa2048, .rsaSignatureMessagePSSSHA256,
                ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"]
            ),
        ]
        for (keyType, algorithm, options) in cases {
            let client = try pki.clientCertificate(commonName: "signer", key: keyType)
            let p12 = try client.pkcs12(password: "pw")
            var items: CFArray?
            #expect(
                SecPKCS12Import(p12 as CFData, [kSecImportExportPassphrase as String: "pw"] as CFDictionary, &items)
                    == errSecSuccess
            )
            let first = (items as? [[String: Any]])?.first
            let identity = first?[kSecImportItemIdentity as String] as! SecIdentity
            var privateKey: SecKey?
            #expect(SecIdentityCopyPrivateKey(identity, &privateKey) == errSecSuccess)
            #expect(SecKeyIsAlgorithmSupported(privateKey!, .sign, algorithm))
            var error: CFError?
            let signature = SecKeyCreateSignature(privateKey!, algorithm, message as CFData, &error)
            #expect(signature != nil, "\(String(describing: error))")
            let publicKey = SecKeyCopyPublicKey(privateKey!)!
            #expect(SecKeyVerifySignature(publicKey, algorithm, message as CFData, signature!, &error))
            #expect(!SecKeyVerifySignature(publicKey, algorithm, Data("tampered".utf8) as CFData, signature!, &error))
            #expect((error as NSError?)?.code == Int(errSecVerifyFailed))
            #expect(SecKeyCreateSignature(publicKey, algorithm, message as CFData, &error) == nil)

            let pem = folder.appendingPathComponent("key.pem")
            let spki = client.certificate.publicKey.spkiDER.base64EncodedString(options: [.lineLength64Characters])
            try Data("-----BEGIN PUBLIC KEY-----\n\(spki)\n-----END PUBLIC KEY-----\n".utf8).write(to: pem)
            let data = folder.appendingPathComponent("message")
            try message.write(to: data)
            let sig = folder.appendingPathComponent("signature")
            try (signature! as Data).write(to: sig)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments =
                ["dgst", "-sha256", "-verify", pem.path, "-signature", sig.path] + options + [data.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "openssl refused the \(algorithm.rawValue) signature")
        }
        // An EC private key's external representation is the point, then the scalar.
        let ec = try pki.clientCertificate(commonName: "ec", key: .ecdsaP256)
        let key = SecKey(privateKeyOf: try ec.identity())
        let raw = SecKeyCopyExternalRepresentation(key, nil)! as Data
        #expect(raw.count == 97 && raw.prefix(65) == ec.certificate.publicKey.rawRepresentation)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map {
            let start = hex.index(hex.startIndex, offsetBy: $0)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    @Test func digestsMatchTheirStandardVectors() {
        let abc = Array("abc".utf8)
        var sha256 = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
        CC_SHA256(abc, CC_LONG(abc.count), &sha256)
        #expect(Self.hex(sha256) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var sha1 = [UInt8](repeating: 0, count: Int(CC_SHA1_DIGEST_LENGTH))
        CC_SHA1(abc, CC_LONG(abc.count), &sha1)
        #expect(Self.hex(sha1) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        var md5 = [UInt8](repeating: 0, count: Int(CC_MD5_DIGEST_LENGTH))
        CC_MD5(abc, CC_LONG(abc.count), &md5)
        #expect(Self.hex(md5) == "900150983cd24fb0d6963f7d28e17f72")
        // Incremental, in two pieces.
        var context = CC_SHA512_CTX()
        CC_SHA512_Init(&context)
        CC_SHA512_Update(&context, Array("a".utf8), 1)
        CC_SHA512_Update(&context, Array("bc".utf8), 2)
        var sha512 = [UInt8](repeating: 0, count: Int(CC_SHA512_DIGEST_LENGTH))
        CC_SHA512_Final(&sha512, &context)
        #expect(Self.hex(sha512).hasPrefix("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"))
    }

    @Test func hmacPBKDF2AndAESMatchTheirStandardVectors() {
        // RFC 4231, test case 1.
        let key = [UInt8](repeating: 0x0B, count: 20)
        let data = Array("Hi There".utf8)
        var mac = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
        CCHmac(CCHmacAlgorithm(kCCHmacAlgSHA256), key, key.count, data, data.count, &mac)
        #expect(Self.hex(mac) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        // RFC 6070, first vector.
        var derived = [UInt8](repeating: 0, count: 20)
        let salt = Array("salt".utf8)
        let status = CCKeyDerivationPBKDF(
            CCPBKDFAlgorithm(kCCPBKDF2),
            "password",
            8,
            salt,
            salt.count,
            CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA1),
            1,
            &derived,
            derived.count
        )
        #expect(status == kCCSuccess)
        #expect(Self.hex(derived) == "0c60c80f961f0e71f3a9b524af6012062fe037a6")
        // NIST SP 800-38A F.2.1 (CBC) and F.1.1 (ECB), AES-128, one block, no padding.
        let aesKey = Self.bytes("2b7e151628aed2a6abf7158809cf4f3c")
        let iv = Self.bytes("000102030405060708090a0b0c0d0e0f")
        let plain = Self.bytes("6bc1bee22e409f96e93d7e117393172a")
        var out = [UInt8](repeating: 0, count: 32)
        var moved = 0
        #expect(
            CCCrypt(
                CCOperation(kCCEncrypt),
                CCAlgorithm(kCCAlgorithmAES),
                0,
                aesKey,
                kCCKeySizeAES128,
                iv,
                plain,
                plain.count,
                &out,
                out.count,
                &moved
            )
                == kCCSuccess
        )
        #expect(Self.hex(Array(out.prefix(moved))) == "7649abac8119b246cee98e9b12e9197d")
        #expect(
            CCCrypt(
                CCOperation(kCCEncrypt),
                CCAlgorithm(kCCAlgorithmAES),
                CCOptions(kCCOptionECBMode),
                aesKey,
                kCCKeySizeAES128,
                nil,
                plain,
                plain.count,
                &out,
                out.count,
                &moved
            )
                == kCCSuccess
        )
        #expect(Self.hex(Array(out.prefix(moved))) == "3ad77bb40d7a3660a89ecaf32466ef97")
        // With padding, round trip; a wrong key fails to unpad or yields other bytes.
        let message = Array("attack at dawn".utf8)
        var sealed = [UInt8](repeating: 0, count: message.count + kCCBlockSizeAES128)
        var sealedLength = 0
        #expect(
            CCCrypt(
                CCOperation(kCCEncrypt),
                CCAlgorithm(kCCAlgorithmAES),
                CCOptions(kCCOptionPKCS7Padding),
                aesKey,
                kCCKeySizeAES128,
                iv,
                message,
                message.count,
                &sealed,
                sealed.count,
                &sealedLength
            )
                == kCCSuccess
        )
        #expect(sealedLength == 16)
        var opened = [UInt8](repeating: 0, count: sealedLength)
        var openedLength = 0
        #expect(
            CCCrypt(
                CCOperation(kCCDecrypt),
                CCAlgorithm(kCCAlgorithmAES),
                CCOptions(kCCOptionPKCS7Padding),
                aesKey,
                kCCKeySizeAES128,
                iv,
                sealed,
                sealedLength,
                &opened,
                opened.count,
                &openedLength
            )
                == kCCSuccess
        )
        #expect(Array(opened.prefix(openedLength)) == message)
        #expect(
            CCCrypt(
                CCOperation(kCCEncrypt),
                CCAlgorithm(kCCAlgorithmAES),
                0,
                aesKey,
                15,
                iv,
                plain,
                plain.count,
                &out,
                out.count,
                &moved
            )
                == kCCParamError
        )
    }
}

/// Compiles as Apple code is written: the sender's optional methods, force-unwrapped.
final class ForceUnwrappingSenderDelegate: NSObject, URLSessionDelegate {
    func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
            challenge.sender!.performDefaultHandling!(for: challenge)
        } else {
            challenge.sender?.rejectProtectionSpaceAndContinue?(with: challenge)
        }
        completionHandler(.performDefaultHandling, nil)
    }
}
