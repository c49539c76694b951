internal import COpenSSL
internal import CSesameShims
import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// One rule for every file a user or a configuration names: regular files only, refused without
/// waiting when they are not, within their kind's size, read in bounded pieces.
@Suite struct UserFileTests {
    static let small = UserFile.Kind(name: "test file", sizeLimit: 1_000)

    func scratch(_ name: String) throws -> String {
        try ScratchFolder.make("user-file").appendingPathComponent(name).path
    }

    @Test func aRegularFileIsReadWhole() throws {
        let path = try scratch("ok")
        let bytes = [UInt8]((0..<1_000).map { UInt8(truncatingIfNeeded: $0) })
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try UserFile.read(path, as: Self.small) == bytes)
        #expect(try UserFile.readIfPresent(path + ".missing", as: Self.small) == nil)
        #expect(throws: SesameError(.fileUnreadable, "")) { try UserFile.read(path + ".missing", as: Self.small) }
    }

    /// A FIFO with no writer would block `open` for ever, and one with a writer would feed the
    /// reader whatever it wants: refused at once, named.
    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let path = try scratch("fifo")
        #expect(mkfifo(path, 0o600) == 0)
        do {
            _ = try UserFile.read(path, as: .netrc)
            Issue.record("a FIFO was read")
        } catch {
            #expect(error.code == .fileUnreadable)
            #expect(error.detail.contains("'\(path)' is a FIFO, not a regular file"), "\(error)")
        }
        #expect(throws: SesameError(.fileUnreadable, "")) { try UserFile.checkIfPresent(path, as: .credentialStore) }
    }

    @Test(arguments: ["/dev/zero", "/dev/null", "/tmp"])
    func devicesAndFoldersAreRefused(_ path: String) {
        #expect(throws: SesameError(.fileUnreadable, "")) { try UserFile.read(path, as: .certificates) }
    }

    /// A file past its kind's limit is refused from its size, before a byte is read (a sparse
    /// gigabyte costs nothing to make and nothing to refuse).
    @Test func aFileOverItsKindsLimitIsRefusedBeforeItIsRead() throws {
        let path = try scratch("large")
        let fd = open(path, O_CREAT | O_WRONLY, 0o600)
        #expect(ftruncate(fd, 1 << 30) == 0)
        close(fd)
        do {
            _ = try UserFile.read(path, as: .credentialStore)
            Issue.record("a gigabyte was read")
        } catch {
            #expect(error.code == .fileTooLarge)
            #expect(error.detail.contains("holds 1073741824 bytes"), "\(error)")
        }
        #expect(throws: SesameError(.fileTooLarge, "")) { try UserFile.checkIfPresent(path, as: .credentialStore) }
        let exact = try scratch("exact")
        try Data(count: Self.small.sizeLimit + 1).write(to: URL(fileURLWithPath: exact))
        #expect(throws: SesameError(.fileTooLarge, "")) { try UserFile.read(exact, as: Self.small) }
    }

    /// A CA folder holds links, other files and possibly worse: regular files are read, the rest
    /// is named and skipped.
    @Test func aFolderIsReadFileByFileSkippingWhatIsNotARegularFile() throws {
        let folder = try ScratchFolder.make("ca-folder-\(UUID().uuidString)")
        try Data(sharedPKI.root.certificate.pemEncoded.utf8).write(to: folder.appendingPathComponent("a.pem"))
        try Data("not a certificate".utf8).write(to: folder.appendingPathComponent("b.txt"))
        #expect(mkfifo(folder.appendingPathComponent("c.fifo").path, 0o600) == 0)
        #expect(symlink("a.pem", folder.appendingPathComponent("d.0").path) == 0)
        let (files, skipped) = try UserFile.readFolder(folder.path, as: .certificates)
        #expect(files.map(\.name) == ["a.pem", "b.txt", "d.0"])
        #expect(skipped.count == 1 && skipped[0].contains("c.fifo"), "\(skipped)")
        let loaded = try Certificate.load(contentsOfFolder: folder.path)
        #expect(loaded.certificates == [sharedPKI.root.certificate, sharedPKI.root.certificate])
        #expect(loaded.skipped.count == 2, "the FIFO and the text file: \(loaded.skipped)")
        #expect(throws: SesameError(.fileTooLarge, "")) {
            try UserFile.readFolder(folder.path, as: .certificates, maximumFiles: 2)
        }
    }

    /// The loaders read their files this way: their errors name the file and what it is.
    @Test func everyLoaderRefusesAFIFO() throws {
        let path = try scratch("loader-fifo")
        #expect(mkfifo(path, 0o600) == 0)
        let url = URL(fileURLWithPath: path)
        let attempts: [(String, () throws -> Void)] = [
            ("certificates", { _ = try Certificate.load(contentsOf: path) }),
            ("CRL", { _ = try CertificateRevocationList.load(contentsOf: path) }),
            ("PKCS#12", { _ = try Identity.load(pkcs12File: path, password: "") }),
            ("PEM identity", { _ = try Identity.load(certificateFile: path, keyFile: path) }),
            (".netrc", { _ = try Netrc.load(url) }),
            ("cookie file", { _ = try CookieStore().load(netscapeFile: url) }),
            ("credential store", { _ = try FileCredentialStore(fileURL: url).entries(for: nil) }),
        ]
        for (name, attempt) in attempts {
            do {
                try attempt()
                Issue.record("\(name): a FIFO was read")
            } catch let error as SesameError {
                #expect(error.detail.contains("is a FIFO, not a regular file"), "\(name): \(error)")
            }
        }
    }

    /// The credential store checks its file before it takes the lock or writes: a FIFO there is
    /// an error, and nothing replaces it.
    @Test func theCredentialStoreRefusesAFIFOBeforeWriting() throws {
        let folder = try ScratchFolder.make("store-fifo-\(UUID().uuidString)")
        let path = folder.appendingPathComponent("credentials.json").path
        #expect(mkfifo(path, 0o600) == 0)
        let store = FileCredentialStore(fileURL: URL(fileURLWithPath: path))
        let space = ProtectionSpace(
            host: "x.test",
            port: 443,
            protocol: "https",
            realm: "r",
            authenticationMethod: .httpBasic
        )
        #expect(throws: SesameError(.credentialStoreFailed, "")) {
            try store.save(StoredCredential(protectionSpace: space, user: "a", password: "b", isDefault: true))
        }
        var status = stat()
        #expect(lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "the FIFO is left as it was")
    }
}

/// PKCS#12 files choose how much work their key derivations cost: a file that asks for more than
/// a bound is refused before any of it is done.
@Suite struct PKCS12CostTests {
    @Test(arguments: [Int(Int32.max), Identity.maximumPKCS12Iterations + 1])
    func aMACThatAsksForTooManyIterationsIsRefusedBeforeItIsComputed(_ iterations: Int) throws {
        let client = try sharedPKI.clientCertificate(commonName: "costly")
        let p12 = try client.pkcs12(password: "pw", claimedMACIterations: iterations)
        do {
            _ = try Identity(pkcs12: p12, password: "pw")
            Issue.record("accepted")
        } catch let error as SesameError {
            #expect(error.code == .invalidPKCS12)
            #expect(error.detail.contains("asks for \(iterations) iterations"), "\(error)")
        }
    }

    @Test func filesAsToolsWriteThemLoad() throws {
        let client = try sharedPKI.clientCertificate(commonName: "usual")
        for p12 in [
            try client.pkcs12(password: "pw"), try client.pkcs12(password: "pw", legacy: true),
            try client.pkcs12(password: "pw", iterations: 10_000),
        ] {
            #expect(try Identity(pkcs12: p12, password: "pw").certificate == client.certificate)
        }
    }

    @Test func aWrongPasswordIsStillAWrongPassword() throws {
        let p12 = try sharedPKI.clientCertificate(commonName: "secret").pkcs12(password: "pw")
        #expect(throws: SesameError(.wrongPassword, "")) { try Identity(pkcs12: p12, password: "nope") }
    }
}

/// Anchors load in time that grows with their number: each is added once, and the store is
/// sorted once (OpenSSL's own add sorted it again after every certificate).
@Suite struct AnchorLoadingTests {
    @Test func manyAnchorsLoadOnceEachAndStillDecide() throws {
        let pki = sharedPKI
        let others = try (0..<500).map { index in
            try pki.issue(pki.caShape("CN=Other Root \(index)"), issuer: nil).certificate
        }
        let anchors = others + [pki.root.certificate] + others  // each other root twice
        let store = try X509StoreBox(anchors: anchors, addingSystem: false)
        #expect(CSesameShims_sk_X509_OBJECT_num(X509_STORE_get0_objects(store.pointer)) == 501)
        let leaf = try pki.leaf()
        let result = CertificateChainEvaluator.evaluate(
            chain: leaf.chain,
            roots: .anchors(anchors),
            host: "localhost"
        )
        #expect(result.isTrusted, "\(result)")
    }

    @Test func pemLabelsAreFoundInOnePass() {
        let text = "x-----BEGIN A-----\n-----BEGIN B-----\n-----BEGIN \n-----END B-----"
        #expect(pemBlockLabels(Array(text.utf8)) == ["A", "B", "\n"])
        #expect(pemBlockLabels(Array("-----BEGIN unterminated".utf8)) == [])
    }
}
