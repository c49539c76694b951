import FoundationEssentials
import Glibc

/// A request body as pieces, each with whether it is the last, for either protocol: an
/// in-memory body goes as one piece, a file in reads of at most `readSize` bytes, a stream in
/// the chunks it yields; an empty last piece ends a body whose end only shows at its end.
/// A file that grows or shrinks while it is read, or a stream that yields more or less than it
/// declared, fails the body. A file it opened is closed when it is done with or dropped.
final class BodyPieces {
    private var parts: [HTTPBody]
    private let readSize: Int
    private var file: (descriptor: Int32, path: String, left: Int)?
    private var stream: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator?
    private var streamDeclared: Int?
    private var streamSent = 0
    private var done = false

    init(_ body: HTTPBody, readSize: Int = 65_536) {
        self.readSize = readSize
        if case .segments(let segments) = body {
            parts = segments.map { segment in
                switch segment {
                case .data(let data): return .data(data)
                case .file(let url): return .file(url)
                }
            }
        } else {
            parts = [body]
        }
        parts.reverse()
    }

    deinit {
        if let file { close(file.descriptor) }
    }

    func next() async throws -> (piece: [UInt8], last: Bool)? {
        guard !done else { return nil }
        while true {
            if let piece = try await nextFromCurrent() { return (piece, false) }
            guard let part = parts.popLast() else {
                done = true
                return ([], true)
            }
            switch part {
            case .data(let data):
                if parts.isEmpty {
                    done = true
                    return ([UInt8](data), true)
                }
                if !data.isEmpty { return ([UInt8](data), false) }
            case .file(let url):
                let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw SesameError(.fileUnreadable, "'\(url.path)': \(errnoText())") }
                file = (descriptor, url.path, part.knownLength ?? 0)
            case .stream(let length, let chunks):
                stream = chunks.makeAsyncIterator()
                streamDeclared = length
                streamSent = 0
            case .segments:
                break  // flattened in init
            }
        }
    }

    private func nextFromCurrent() async throws -> [UInt8]? {
        if let (descriptor, path, left) = file {
            var chunk = [UInt8](repeating: 0, count: readSize)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { return try await nextFromCurrent() }
                close(descriptor)
                file = nil
                throw SesameError(.fileUnreadable, "'\(path)': \(errnoText())")
            }
            guard count > 0 else {
                close(descriptor)
                file = nil
                guard left == 0 else { throw SesameError(.fileUnreadable, "'\(path)' shrank while it was being sent") }
                return nil
            }
            guard count <= left else {
                close(descriptor)
                file = nil
                throw SesameError(.fileUnreadable, "'\(path)' grew while it was being sent")
            }
            file = (descriptor, path, left - count)
            return count == chunk.count ? chunk : Array(chunk[0..<count])
        }
        if stream != nil {
            while let chunk = try await stream?.next() {
                guard !chunk.isEmpty else { continue }
                streamSent += chunk.count
                if let declared = streamDeclared, streamSent > declared {
                    throw SesameError(
                        .invalidArgument,
                        "the body stream produced more than its declared \(declared) bytes"
                    )
                }
                return chunk
            }
            stream = nil
            if let declared = streamDeclared, streamSent != declared {
                throw SesameError(
                    .invalidArgument,
                    "the body stream produced \(streamSent) of its declared \(declared) bytes"
                )
            }
        }
        return nil
    }
}
