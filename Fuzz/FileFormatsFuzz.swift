import Foundation

// Fuzz targets for what Sesame reads from a user's files: `netrc`, `credential-store` (the
// permanent store's JSON and its items file) and `certificates` (PEM and DER certificates,
// CRLs, PEM private keys, PKCS#12). Bad input must be a SesameError naming the problem, never a crash or a hang.

func fuzzNetrc(_ bytes: UnsafeRawBufferPointer) {
    do {
        let netrc = try Netrc(parsing: String(decoding: bytes, as: UTF8.self), source: "fuzz")
        for entry in netrc.entries { _ = netrc.entry(for: entry.machine ?? "host.example") }
    } catch let error as SesameError {
        fuzzRequire(error.code == .netrcInvalid, "\(error)")
    } catch {
        fuzzFail("not a SesameError: \(error)")
    }
}

func fuzzCredentialStore(_ bytes: UnsafeRawBufferPointer) {
    let store = FileCredentialStore(path: "/fuzz/credentials.json")
    do {
        let entries = try store.decode(Array(bytes))
        // What was read is written and read back the same.
        let document = FileCredentialStore.Document(
            format: FileCredentialStore.format,
            version: FileCredentialStore.version,
            entries: entries
        )
        let encoded = try JSONEncoder().encode(document)
        let again = try store.decode(Array(encoded))
        fuzzRequire(again == entries, "round trip")
    } catch let error as SesameError {
        fuzzRequire(error.code == .credentialStoreCorrupt, "\(error)")
    } catch {
        fuzzFail("not a SesameError: \(error)")
    }
    // The same bytes as the file of items kept beside the passwords.
    do {
        let items = try store.decodeItems(Array(bytes))
        let document = FileCredentialStore.ItemDocument(
            format: FileCredentialStore.itemsFormat,
            version: FileCredentialStore.itemsVersion,
            items: items
        )
        let again = try store.decodeItems(Array(try JSONEncoder().encode(document)))
        fuzzRequire(again == items, "item round trip")
    } catch let error as SesameError {
        fuzzRequire(error.code == .credentialStoreCorrupt, "\(error)")
    } catch {
        fuzzFail("not a SesameError: \(error)")
    }
}

func fuzzCertificates(_ bytes: UnsafeRawBufferPointer) {
    let input = Array(bytes)
    func expectSesameError(_ body: () throws -> Void) {
        do {
            try body()
        } catch is SesameError {
        } catch {
            fuzzFail("not a SesameError: \(error)")
        }
    }
    expectSesameError {
        for certificate in try Certificate.certificates(fileBytes: input, source: "fuzz") {
            _ = certificate.subject.description
            _ = certificate.issuer.description
            _ = certificate.subjectAlternativeNames
            _ = certificate.serialNumber
            _ = certificate.notValidBefore
            _ = certificate.publicKey.sha256Pin
            _ = certificate.isSelfIssued
        }
    }
    expectSesameError { _ = try CertificateRevocationList(Data(input), source: "fuzz") }
    let text = String(decoding: input, as: UTF8.self)
    if let split = text.firstIndex(of: "\u{0}") {
        expectSesameError {
            _ = try Identity(certificatePEM: String(text[..<split]), privateKeyPEM: String(text[split...].dropFirst()))
        }
    }
    expectSesameError { _ = try Identity(pkcs12: Data(input), password: "fuzz") }
}

/// The file readers themselves: every loader reads a file through ``UserFile`` and must give back
/// exactly its bytes, or a SesameError (never a crash) when they are not what it takes.
func fuzzUserFiles(_ bytes: UnsafeRawBufferPointer) {
    let path = fuzzFilePath
    let input = Array(bytes)
    guard (try? Data(input).write(to: URL(fileURLWithPath: path))) != nil else { fuzzFail("cannot write \(path)") }
    let small = UserFile.Kind(name: "fuzz file", sizeLimit: 4_096)
    do {
        let read = try UserFile.read(path, as: small)
        fuzzRequire(read == input, "read back \(read.count) of \(input.count) bytes")
    } catch {
        fuzzRequire(error.code == .fileTooLarge && input.count > small.sizeLimit, "\(error)")
    }
    func expectSesameError(_ body: () throws -> Void) {
        do {
            try body()
        } catch is SesameError {
        } catch {
            fuzzFail("not a SesameError: \(error)")
        }
    }
    expectSesameError { _ = try Certificate.load(contentsOf: path) }
    expectSesameError { _ = try CertificateRevocationList.load(contentsOf: path) }
    expectSesameError { _ = try Netrc.load(URL(fileURLWithPath: path)) }
    expectSesameError { _ = try CookieStore().load(netscapeFile: URL(fileURLWithPath: path)) }
    expectSesameError { _ = try Identity.load(pkcs12File: path, password: "fuzz") }
}

/// One scratch file per fuzzing process.
private let fuzzFilePath = FileManager.default.temporaryDirectory.appendingPathComponent(
    "sesame-fuzz-\(getpid())"
).path
