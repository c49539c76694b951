internal import CSesameShims
internal import CZlib

/// Streaming decompression of `gzip` and `deflate` response bodies through zlib, with a bound on
/// the decoded size (a small body must not expand without limit).
final class Inflater: BodyDecoder {
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

    /// Compressed bytes taken but not yet decoded.
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    /// The last call filled its output: zlib may hold more output without more input.
    private var outputWasFull = false

    /// True when every byte fed so far has been decoded and handed out: the next piece needs
    /// more input.
    var needsInput: Bool { pendingOffset == pending.count && !outputWasFull }

    /// Takes the next compressed bytes of the body. Call only when ``needsInput``: the decoder
    /// holds at most one read's worth of input.
    func feed(_ input: [UInt8]) {
        assert(needsInput, "fed before the last input was decoded")
        pending = input
        pendingOffset = 0
    }

    /// The next decoded piece, at most 64 KiB, or nil when the input fed so far is used up.
    /// However much one read's bytes expand to, they are handed out piece by piece: what the
    /// consumer holds at once stays within a few such pieces (a decompression bomb streams, it
    /// does not grow in memory).
    func nextPiece() throws -> [UInt8]? {
        while true {
            if isFinished {
                guard pendingOffset < pending.count else { return nil }
                // gzip allows several members back to back; anything else after the end is an error.
                guard coding == .gzip else {
                    throw SesameError(.protocolError, "data after the end of the \(coding) body")
                }
                try start(windowBits: 15 + 16)
                isFinished = false
            }
            guard !needsInput else { return nil }
            let before = pending.count - pendingOffset
            let (result, piece, restarted) = try step()
            if result == Z_STREAM_END {
                isFinished = true
                outputWasFull = false
            }
            if !piece.isEmpty { return piece }
            // Input there, room for output, and zlib took nothing and gave nothing: it never will.
            if before > 0, pending.count - pendingOffset == before, !restarted, !isFinished {
                throw SesameError(.protocolError, "the \(coding) body is corrupt (decoding made no progress)")
            }
        }
    }

    /// Runs one inflate call over the pending input; returns what it produced.
    private func step() throws -> (result: Int32, piece: [UInt8], restarted: Bool) {
        // Room for what this input is likely to expand to (up to 64 KiB a call; more output
        // means another call), left uninitialized: zlib writes it, and only what it wrote is kept.
        let remaining = pending.count - pendingOffset
        let room = outputWasFull ? Self.largestStep : min(Self.largestStep, max(Self.smallestStep, remaining * 8))
        var result: Int32 = Z_OK
        var left = 0
        var full = false
        let offset = pendingOffset
        let chunk = pending.withUnsafeBytes { raw in
            [UInt8](unsafeUninitializedCapacity: room) { out, made in
                let input = raw.bindMemory(to: Bytef.self).baseAddress.map { $0 + offset }
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input)
                stream.pointee.avail_in = UInt32(remaining)
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
        if result == Z_DATA_ERROR && coding == .deflate && !triedRawDeflate && produced == 0 {
            // Some servers send raw deflate without the zlib wrapper RFC 9110 asks for.
            triedRawDeflate = true
            try start(windowBits: -15)
            outputWasFull = false
            return (Z_OK, [], true)
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
        produced += chunk.count
        guard produced <= limit else {
            throw SesameError(.protocolError, "the decoded body is larger than the \(limit)-byte limit")
        }
        pendingOffset = pending.count - left
        outputWasFull = full
        if pendingOffset == pending.count && !full {
            pending = []
            pendingOffset = 0
        }
        return (result, chunk, false)
    }

    /// Feeds `input` and returns everything it decodes to, for a caller that keeps the whole
    /// output anyway (bounded by the limit).
    func inflate(_ input: [UInt8]) throws -> [UInt8] {
        feed(input)
        var output: [UInt8] = []
        while let piece = try nextPiece() { output += piece }
        return output
    }

    /// The body ended: it must have reached the end of the compressed stream.
    func finish() throws {
        guard isFinished else {
            throw SesameError(.protocolError, "the \(coding) body ended before its compressed stream did")
        }
    }
}
