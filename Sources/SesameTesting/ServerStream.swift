internal import COpenSSL
import FoundationEssentials
import Glibc

/// Owns a server-side `SSL`.
final class OwnedSSL: @unchecked Sendable {
    // @unchecked: used by the one thread serving its connection.
    let pointer: OpaquePointer
    init(takingOwnership pointer: OpaquePointer) { self.pointer = pointer }
    deinit { SSL_free(pointer) }
}

/// The byte stream of one accepted connection: plain socket or TLS (blocking, one thread each).
enum ServerStream {
    case plain(Int32)
    case tls(OwnedSSL)

    enum ReadResult {
        case bytes(Int)
        case closed
        case closeNotify
        case failed(String)
    }

    func read(into buffer: inout [UInt8]) -> ReadResult {
        switch self {
        case .plain(let fd):
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return .bytes(count) }
            return count == 0 ? .closed : .failed(String(cString: strerror(errno)))
        case .tls(let ssl):
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl.pointer, $0.baseAddress, Int32($0.count)) }
            if count > 0 { return .bytes(Int(count)) }
            if SSL_get_error(ssl.pointer, count) == SSL_ERROR_ZERO_RETURN { return .closeNotify }
            // TLS 1.3: a client-certificate failure surfaces on the server's first read.
            return .failed(TestingError("read").description)
        }
    }

    /// Writes everything; false when the peer is gone.
    func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written: Int
            switch self {
            case .plain(let fd):
                written = bytes.withUnsafeBytes {
                    send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
                }  // safe: non-empty
            case .tls(let ssl):
                written = Int(
                    bytes.withUnsafeBytes { SSL_write(ssl.pointer, $0.baseAddress! + offset, Int32($0.count - offset)) }
                )  // safe: non-empty
            }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    func close() {
        if case .tls(let ssl) = self { SSL_shutdown(ssl.pointer) }
    }

    /// The socket under the stream.
    var descriptor: Int32 {
        switch self {
        case .plain(let fd): return fd
        case .tls(let ssl): return SSL_get_fd(ssl.pointer)
        }
    }

    /// Decrypted bytes already buffered inside TLS (poll cannot see them).
    var hasBufferedBytes: Bool {
        if case .tls(let ssl) = self { return SSL_pending(ssl.pointer) > 0 }
        return false
    }
}

/// Reads requests (head, then a Content-Length or chunked body) off a ``ServerStream``.
struct ServerRequestReader {
    enum Received {
        case request(head: String, body: [UInt8])
        case closed
        case closeNotify
    }

    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    let stream: ServerStream
    private var pending: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 65_536)

    init(stream: ServerStream) { self.stream = stream }

    /// The next request, or how the connection ended. `received` is told of every byte count read.
    mutating func next(sendsContinue: Bool, received: (Int) -> Void) throws -> Received {
        guard let headEnd = try fill(until: { $0.firstRange(of: [13, 10, 13, 10]).map(\.upperBound) }, received) else {
            return lastEnd
        }
        let head = String(decoding: pending[0..<(headEnd - 4)], as: UTF8.self)
        pending.removeFirst(headEnd)
        var headers: [(String, String)] = []
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingWhitespace())
            )
        }
        func value(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }
        if sendsContinue, value("expect")?.lowercased() == "100-continue" {
            _ = stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        if value("transfer-encoding")?.lowercased().contains("chunked") == true {
            var body: [UInt8] = []
            while true {
                guard let lineEnd = try fill(until: { $0.firstRange(of: [13, 10]).map(\.upperBound) }, received) else {
                    throw ReadError(description: "the client closed in the middle of a chunked body")
                }
                let sizeText = String(decoding: pending[0..<(lineEnd - 2)], as: UTF8.self).prefix { $0 != ";" }
                pending.removeFirst(lineEnd)
                guard let size = Int(sizeText.trimmingWhitespace(), radix: 16) else {
                    throw ReadError(description: "bad chunk size '\(sizeText)'")
                }
                if size == 0 {
                    // Trailers, up to the empty line.
                    while let end = try fill(until: { $0.firstRange(of: [13, 10]).map(\.upperBound) }, received) {
                        let isEmpty = end == 2
                        pending.removeFirst(end)
                        if isEmpty { break }
                    }
                    return .request(head: head, body: body)
                }
                guard try fill(until: { $0.count >= size + 2 ? size + 2 : nil }, received) != nil else {
                    throw ReadError(description: "the client closed in the middle of a chunk")
                }
                body += pending[0..<size]
                pending.removeFirst(size + 2)
            }
        }
        let length = Int(value("content-length") ?? "0") ?? 0
        guard try fill(until: { $0.count >= length ? length : nil }, received) != nil else {
            throw ReadError(description: "the client closed before sending its \(length)-byte body")
        }
        let body = Array(pending[0..<length])
        pending.removeFirst(length)
        return .request(head: head, body: body)
    }

    /// Reads and discards until the peer closes (used to hold a stalled connection open).
    /// Bytes read past the last request (the first bytes of a tunnel).
    mutating func takePending() -> [UInt8] {
        defer { pending.removeAll() }
        return pending
    }

    mutating func drainUntilClosed() -> Received {
        while true {
            switch stream.read(into: &scratch) {
            case .bytes: continue
            case .closeNotify: return .closeNotify
            case .closed, .failed: return .closed
            }
        }
    }

    /// How the stream ended, once it has.
    private var lastEnd: Received = .closed

    /// Reads until `found` returns a position in `pending`; nil when the stream ended first.
    private mutating func fill(until found: ([UInt8]) -> Int?, _ received: (Int) -> Void) throws -> Int? {
        while true {
            if let position = found(pending) { return position }
            switch stream.read(into: &scratch) {
            case .bytes(let count):
                received(count)
                pending += scratch[0..<count]
            case .closed:
                lastEnd = .closed
                return nil
            case .closeNotify:
                lastEnd = .closeNotify
                return nil
            case .failed(let reason):
                throw ReadError(description: reason)
            }
        }
    }
}
