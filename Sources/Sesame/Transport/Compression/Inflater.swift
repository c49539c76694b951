internal import CSesameShims
internal import CZlib

/// Streaming decompression of `gzip` and `deflate` response bodies through zlib, with a bound on
/// the decoded size (a small body must not expand without limit).
final class Inflater {
    enum Coding: Sendable {
        case gzip
        case deflate
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let coding: Coding
    private let limit: Int
    private var produced = 0
    private var initialized = false
    private var triedRawDeflate = false
    private(set) var isFinished = false

    /// - Parameters:
    ///   - coding: the Content-Encoding.
    ///   - limit: the most decoded bytes allowed.
    init(coding: Coding, limit: Int) throws {
        self.coding = coding
        self.limit = limit
        // zlib keeps a pointer back to the z_stream, so it must not move: it lives on the heap.
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        try start(windowBits: 15 + 32)  // zlib or gzip header, detected
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    private func start(windowBits: Int32) throws {
        if initialized { inflateEnd(stream) }
        stream.pointee = z_stream()
        guard CSesameShims_inflateInit2(stream, windowBits) == Z_OK else {
            throw SesameError(.protocolError, "zlib could not start decoding")
        }
        initialized = true
    }

    /// Decodes the next piece of the body.
    func inflate(_ input: [UInt8]) throws -> [UInt8] {
        guard !input.isEmpty else { return [] }
        var output: [UInt8] = []
        var remaining = input[...]
        while true {
            if isFinished {
                guard !remaining.isEmpty else { break }
                // gzip allows several members back to back; anything else after the end is an error.
                guard coding == .gzip else {
                    throw SesameError(.protocolError, "data after the end of the \(coding) body")
                }
                try start(windowBits: 15 + 16)
                isFinished = false
            }
            let (result, progressed, outputFull) = try step(&remaining, into: &output)
            if result == Z_STREAM_END {
                isFinished = true
                continue
            }
            if (remaining.isEmpty && !outputFull) || !progressed { break }
        }
        return output
    }

    /// Runs one inflate call over `input`; appends what it produced.
    private func step(
        _ input: inout ArraySlice<UInt8>,
        into output: inout [UInt8]
    ) throws -> (result: Int32, progressed: Bool, outputFull: Bool) {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let before = input.count
        let (result, made, left) = input.withUnsafeBytes { raw -> (Int32, Int, Int) in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: Bytef.self).baseAddress)
            stream.pointee.avail_in = UInt32(raw.count)
            let code = chunk.withUnsafeMutableBytes { out -> Int32 in
                stream.pointee.next_out = out.bindMemory(to: Bytef.self).baseAddress
                stream.pointee.avail_out = UInt32(out.count)
                return CZlib.inflate(stream, Z_NO_FLUSH)
            }
            let made = chunk.count - Int(stream.pointee.avail_out)
            let left = Int(stream.pointee.avail_in)
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
            return (code, made, left)
        }
        if result == Z_DATA_ERROR && coding == .deflate && !triedRawDeflate && produced == 0 {
            // Some servers send raw deflate without the zlib wrapper RFC 9110 asks for.
            triedRawDeflate = true
            try start(windowBits: -15)
            return (Z_OK, true, false)
        }
        switch result {
        case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
            break
        case Z_NEED_DICT:
            throw SesameError(.protocolError, "the \(coding) body needs a preset dictionary")
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "error \(result)"
            throw SesameError(.protocolError, "the \(coding) body is corrupt (\(message))")
        }
        produced += made
        guard produced <= limit else {
            throw SesameError(.protocolError, "the decoded body is larger than the \(limit)-byte limit")
        }
        output += chunk[0..<made]
        input = input.suffix(left)
        return (result, made > 0 || left < before, made == chunk.count)
    }

    /// The body ended: it must have reached the end of the compressed stream.
    func finish() throws {
        guard isFinished else {
            throw SesameError(.protocolError, "the \(coding) body ended before its compressed stream did")
        }
    }
}
