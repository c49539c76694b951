import Foundation
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

/// Where the body goes: standard output, or a file that appears only when the transfer succeeded.
final class BodySink: @unchecked Sendable {
    // @unchecked: written by one task at a time (the fetch's delegate), then committed once.
    private let handle: FileHandle
    private let temporary: String?
    private let destination: String?

    init(options: FetchOptions) throws {
        guard let output = options.output, output != "-" else {
            handle = FileHandle.standardOutput
            temporary = nil
            destination = nil
            return
        }
        let directory = (output as NSString).deletingLastPathComponent
        let name = (output as NSString).lastPathComponent
        let temporary = ((directory.isEmpty ? "." : directory) as NSString)
            .appendingPathComponent(".\(name).sesame-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporary)
        else { throw CommandError("cannot write '\(output)': \(String(cString: strerror(errno)))") }
        self.handle = handle
        self.temporary = temporary
        self.destination = output
    }

    func write(_ bytes: [UInt8]) { handle.write(Data(bytes)) }

    /// Moves a file download into place.
    func commit() throws {
        guard let temporary, let destination else { return }
        try handle.close()
        guard rename(temporary, destination) == 0 else {
            throw CommandError("cannot write '\(destination)': \(String(cString: strerror(errno)))")
        }
    }

    /// Drops a partial file download.
    func discard() {
        guard let temporary else { return }
        try? handle.close()
        unlink(temporary)
    }
}
