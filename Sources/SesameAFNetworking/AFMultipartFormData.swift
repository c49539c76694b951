import Sesame

/// The parts of a multipart request being built (`AFMultipartFormData`). Methods that can fail
/// throw; the others record their failure, which the request then reports.
public protocol AFMultipartFormData: AnyObject {
    /// A file part named after the file, its type guessed from the extension.
    func appendPart(withFileURL fileURL: URL, name: String) throws
    /// A file part with the given field name, file name and MIME type; the file is streamed from
    /// disk when the body is sent.
    /// - Throws: when the URL is not a file URL or the file cannot be read.
    func appendPart(withFileURL fileURL: URL, name: String, fileName: String, mimeType: String) throws
    /// `length` bytes of `inputStream`, read when the part is appended (up to 256 MiB; write
    /// larger bodies to a file and append the file, which is streamed from disk).
    func appendPart(with inputStream: InputStream?, name: String, fileName: String, length: Int64, mimeType: String)
    /// A part holding `data` as a file with the given field name, file name and MIME type.
    func appendPart(withFileData data: Data, name: String, fileName: String, mimeType: String)
    /// A form field holding `data`, with no file name or content type.
    func appendPart(withForm data: Data, name: String)
    /// A part with exactly these headers and `body`.
    func appendPart(withHeaders headers: [String: String]?, body: Data)
    /// Accepted for source compatibility; Sesame paces uploads by the socket, not by delays.
    func throttleBandwidth(withPacketSize numberOfBytes: Int, delay: TimeInterval)
}

/// The form built by ``AFHTTPRequestSerializer/multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:error:)``
/// over Sesame's ``MultipartFormData``: pieces in memory and files read from disk as they are sent.
final class AFStreamingMultipartFormData: AFMultipartFormData {
    static let maximumStreamPart: Int64 = 256 << 20
    private var form = MultipartFormData()
    private var failure: NSError?
    private let stringEncoding: UInt

    init(stringEncoding: UInt) { self.stringEncoding = stringEncoding }

    func appendParameters(_ parameters: [String: Any]) throws {
        let encoding = TextEncoding(String.Encoding(rawValue: stringEncoding)) ?? .utf8
        for pair in try AFQueryString.pairs(parameters) {
            switch pair.value {
            case .data(let data)?: form.append(data, name: pair.field, fileName: nil, mimeType: nil)
            case .text(let text)?:
                form.append(Data(try encoding.encode(text)), name: pair.field, fileName: nil, mimeType: nil)
            case nil: form.append(Data(), name: pair.field, fileName: nil, mimeType: nil)
            }
        }
    }

    func appendPart(withFileURL fileURL: URL, name: String) throws {
        try appendFile(fileURL, name: name, fileName: fileURL.lastPathComponent, mimeType: nil)
    }

    func appendPart(withFileURL fileURL: URL, name: String, fileName: String, mimeType: String) throws {
        try appendFile(fileURL, name: name, fileName: fileName, mimeType: mimeType)
    }

    private func appendFile(_ fileURL: URL, name: String, fileName: String, mimeType: String?) throws {
        guard fileURL.isFileURL else {
            throw Self.error(NSURLErrorBadURL, "Expected URL to be a file URL: \(fileURL.absoluteString)")
        }
        do {
            try form.appendFile(at: fileURL, name: name, fileName: fileName, mimeType: mimeType)
        } catch {
            throw Self.error(NSURLErrorBadURL, "\(error)")
        }
    }

    func appendPart(with inputStream: InputStream?, name: String, fileName: String, length: Int64, mimeType: String) {
        guard let inputStream else { return record(Self.error(NSURLErrorBadURL, "no input stream for part '\(name)'")) }
        guard length >= 0, length <= Self.maximumStreamPart else {
            return record(
                Self.error(
                    NSURLErrorDataLengthExceedsMaximum,
                    "the stream part '\(name)' declares \(length) bytes; append parts over \(Self.maximumStreamPart) bytes from a file"
                )
            )
        }
        var data = Data()
        data.reserveCapacity(Int(length))
        inputStream.open()
        defer { inputStream.close() }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while data.count < Int(length) {
            let count = inputStream.read(&buffer, maxLength: min(buffer.count, Int(length) - data.count))
            if count < 0 {
                return record(
                    Self.error(
                        NSURLErrorCannotOpenFile,
                        "reading part '\(name)': \(inputStream.streamError.map { "\($0)" } ?? "stream error")"
                    )
                )
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[..<count])
        }
        guard data.count == Int(length) else {
            return record(
                Self.error(
                    NSURLErrorCannotOpenFile,
                    "the stream for part '\(name)' ended after \(data.count) of its \(length) bytes"
                )
            )
        }
        form.append(data, name: name, fileName: fileName, mimeType: mimeType)
    }

    func appendPart(withFileData data: Data, name: String, fileName: String, mimeType: String) {
        form.append(data, name: name, fileName: fileName, mimeType: mimeType)
    }

    func appendPart(withForm data: Data, name: String) {
        form.append(data, name: name, fileName: nil, mimeType: nil)
    }

    func appendPart(withHeaders headers: [String: String]?, body: Data) {
        do {
            try form.append(body, headers: (headers ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        } catch {
            record(Self.error(NSURLErrorCannotDecodeContentData, "\(error)"))
        }
    }

    func throttleBandwidth(withPacketSize numberOfBytes: Int, delay: TimeInterval) {}

    /// Puts the body and its `Content-Type` on `request`; throws the first failure recorded.
    func apply(to request: inout URLRequest) throws {
        if let failure { throw failure }
        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        request.sesameBody = form.body
    }

    private func record(_ error: NSError) {
        if failure == nil { failure = error }
    }

    private static func error(_ code: Int, _ reason: String) -> NSError {
        NSError(
            domain: AFURLRequestSerializationErrorDomain,
            code: code,
            userInfo: [NSLocalizedDescriptionKey: reason, NSLocalizedFailureReasonErrorKey: reason]
        )
    }
}
