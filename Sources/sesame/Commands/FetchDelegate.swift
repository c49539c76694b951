import FoundationEssentials
import Glibc
import Sesame

/// Receives the fetch's response and body: head for `-i`, body to the sink, progress, `--fail`.
final class FetchDelegate: SessionTaskDelegate, @unchecked Sendable {
    // @unchecked: the session calls one method at a time for a task, in order; `completion` is set
    // before the task starts.
    let options: FetchOptions
    let sink: BodySink
    var completion: ((any Error)?) -> Void = { _ in }
    private(set) var failedStatus: Int?
    private(set) var finalStatus: Int?
    /// The URL of the final response (after redirects).
    private(set) var finalURL: URL?
    /// Why `--decode-charset` could not convert the body, if it could not.
    private(set) var decodeFailure: String?
    private var progress: ProgressBar?
    private var response: HTTPResponse?
    private var undecoded: Data?

    init(options: FetchOptions, sink: BodySink) {
        self.options = options
        self.sink = sink
    }

    func session(_ session: Session, task: SessionTask, didReceive response: HTTPResponse) async -> ResponseDisposition
    {
        finalStatus = response.status
        finalURL = response.url
        self.response = response
        if options.decodeCharset != nil { undecoded = Data() }
        if options.failOnHTTPError && response.status >= 400 {
            failedStatus = response.status
            return .cancel
        }
        if options.includeHead {
            var head = "\(response.version) \(response.status) \(response.reason)\r\n"
            for field in response.headers { head += "\(field.name): \(field.value)\r\n" }
            sink.write(Array((head + "\r\n").utf8))
        }
        if options.output != nil && !options.silent && isatty(2) == 1 {
            progress = ProgressBar(expected: response.expectedContentLength)
        }
        return .allow
    }

    func session(_ session: Session, task: SessionTask, didReceive data: Data) async {
        if undecoded != nil {
            undecoded?.append(data)  // --decode-charset converts the whole body at the end
            progress?.advance(by: data.count)
            return
        }
        sink.write([UInt8](data))
        progress?.advance(by: data.count)
    }

    func session(_ session: Session, task: SessionTask, didCompleteWithError error: (any Error)?) async {
        progress?.finish()
        if error == nil, options.verbose, let trailers = task.response?.trailers { Verbose.printTrailers(trailers) }
        if error == nil, let undecoded, let response, let name = options.decodeCharset {
            do {
                var serializer = StringResponseSerializer()
                serializer.validation = ResponseValidation(acceptableStatusCodes: nil)
                if name.lowercased() != "auto" { serializer.overridingEncoding = try TextEncoding(ianaName: name) }
                sink.write(Array(try serializer.serialize(response, data: undecoded).utf8))
            } catch let failure as ResponseSerializationError {
                decodeFailure = "--decode-charset: \(failure.reason)"
            } catch {
                decodeFailure = "--decode-charset: \(error)"
            }
        }
        completion(failedStatus != nil ? nil : error)
    }
}

/// Where the body goes: standard output, or `-o FILE`.
///
/// As curl does, `FILE` is opened when the first byte arrives (a transfer that fails before
/// leaves it untouched) and written through: created or truncated, a symbolic link's target, a
/// device such as `/dev/null` or a FIFO receive the bytes; nothing is renamed over them. With
/// `--atomic`, a regular file (or a new one) is written beside `FILE` and renamed over it only
/// when the transfer succeeded. `--remove-on-error` removes a partly written regular file.
final class BodySink: @unchecked Sendable {
    // @unchecked: written by one task at a time (the fetch's delegate), then committed once.
    private enum Target {
        case standardOutput
        case file(path: String)
        case atomic(temporary: String, destination: String)
    }

    private let target: Target
    private let removesOnError: Bool
    private var fd: Int32 = -1
    private var failure: String?

    init(options: FetchOptions) throws {
        removesOnError = options.removeOnError
        guard let output = options.output, output != "-" else {
            target = .standardOutput
            fd = STDOUT_FILENO
            return
        }
        guard options.atomicOutput, Self.isRegularOrMissing(output) else {
            target = .file(path: output)
            return
        }
        // Beside the output: the same folder, so that the rename cannot cross file systems.
        let slash = output.lastIndex(of: "/")
        let directory = slash.map { String(output[...$0]) } ?? "./"
        let name = slash.map { String(output[output.index(after: $0)...]) } ?? output
        let temporary = directory + ".\(name).sesame-\(UUID().uuidString)"
        target = .atomic(temporary: temporary, destination: output)
    }

    /// A regular file that is not a symbolic link, or nothing yet: what `--atomic` may replace.
    private static func isRegularOrMissing(_ path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0 else { return errno == ENOENT }
        return status.st_mode & S_IFMT == S_IFREG
    }

    func write(_ bytes: [UInt8]) {
        guard failure == nil, !bytes.isEmpty, open() else { return }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.write(fd, $0.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if count < 0 {
                if errno == EINTR { continue }
                failure = "cannot write '\(path)': \(String(cString: strerror(errno)))"
                return
            }
            written += count
        }
    }

    /// Makes sure the output is open; false (with `failure` set) when it cannot be.
    private func open() -> Bool {
        if fd >= 0 { return true }
        let (path, flags): (String, Int32) =
            switch target {
            case .standardOutput: ("-", 0)
            case .file(let path): (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC)
            case .atomic(let temporary, _): (temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
            }
        fd = Glibc.open(path, flags, 0o666)
        if fd < 0 {
            failure = "cannot write '\(self.path)': \(String(cString: strerror(errno)))"
            return false
        }
        return true
    }

    /// What the user named.
    private var path: String {
        switch target {
        case .standardOutput: "-"
        case .file(let path): path
        case .atomic(_, let destination): destination
        }
    }

    /// The transfer succeeded: an empty body still makes its (empty) file; `--atomic` moves the
    /// file into place.
    func commit() throws {
        _ = open()
        if let failure { throw CommandError(failure) }
        guard case .atomic(let temporary, let destination) = target else { return }
        closeFile()
        guard rename(temporary, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CommandError("cannot write '\(destination)': \(reason)")
        }
    }

    /// The transfer failed: an `--atomic` file is dropped, a partly written one is removed with
    /// `--remove-on-error` when it is a regular file, and otherwise kept, as curl keeps it.
    func discard() {
        let opened = fd >= 0
        closeFile()
        switch target {
        case .standardOutput:
            break
        case .atomic(let temporary, _):
            if opened { unlink(temporary) }
        case .file(let path):
            var status = stat()
            if opened, removesOnError, lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG { unlink(path) }
        }
    }

    private func closeFile() {
        if fd >= 0, fd != STDOUT_FILENO { close(fd) }
        if fd != STDOUT_FILENO { fd = -1 }
    }
}
