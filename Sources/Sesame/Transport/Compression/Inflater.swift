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
    /// Output room per inflate call: at least this much, at most the larger bound.
    private static let smallestStep = 1_024
    private static let largestStep = 65_536

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
        // Room for what this input is likely to expand to (up to 64 KiB a call; more output
        // means another call), left uninitialized: zlib writes it, and only what it wrote is kept.
        let room = min(Self.largestStep, max(Self.smallestStep, input.count * 8))
        let before = input.count
        var result: Int32 = Z_OK
        var left = 0
        var full = false
        let chunk = input.withUnsafeBytes { raw in
            [UInt8](unsafeUninitializedCapacity: room) { out, made in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: Bytef.self).baseAddress)
                stream.pointee.avail_in = UInt32(raw.count)
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = UInt32(out.count)
                result = CZlib.inflate(stream, Z_NO_FLUSH)
                made = out.count - Int(stream.pointee.avail_out)
                full = stream.pointee.avail_out == 0
                left = Int(stream.pointee.avail_in)
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
                stream.pointee.next_out = nil
                stream.pointee.avail_out = 0
            }
        }
        let made = chunk.count
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
        if output.isEmpty { output = chunk } else { output += chunk }
        input = input.suffix(left)
        return (result, made > 0 || left < before, full)
    }

    /// The body ended: it must have reached the end of the compressed stream.
    func finish() throws {
        guard isFinished else {
            throw SesameError(.protocolError, "the \(coding) body ended before its compressed stream did")
        }
    }
}
