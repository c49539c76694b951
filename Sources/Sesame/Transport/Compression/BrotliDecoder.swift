internal import CBrotli

/// Streaming decompression of `br` response bodies (RFC 7932) through libbrotli, with a bound
/// on the decoded size, handed out in pieces of at most 64 KiB as ``Inflater`` does.
final class BrotliDecoder: BodyDecoder {
    private let state: OpaquePointer
    private let limit: Int
    private var produced = 0
    private(set) var isFinished = false
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    /// The decoder said it has more output without more input.
    private var hasMoreOutput = false
    private static let step = 65_536

    init(limit: Int) throws {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else {
            throw SesameError(.protocolError, "brotli could not start decoding")
        }
        self.state = state
        self.limit = limit
    }

    deinit { BrotliDecoderDestroyInstance(state) }

    var needsInput: Bool { pendingOffset == pending.count && !hasMoreOutput }

    func feed(_ input: [UInt8]) {
        assert(needsInput, "fed before the last input was decoded")
        pending = input
        pendingOffset = 0
    }

    func nextPiece() throws -> [UInt8]? {
        if isFinished {
            guard pendingOffset == pending.count else {
                throw SesameError(.protocolError, "data after the end of the br body")
            }
            return nil
        }
        guard !needsInput else { return nil }
        let remaining = pending.count - pendingOffset
        var result = BROTLI_DECODER_RESULT_ERROR
        var left = 0
        let offset = pendingOffset
        let piece = pending.withUnsafeBufferPointer { input in
            [UInt8](unsafeUninitializedCapacity: Self.step) { out, made in
                var availableIn = remaining
                var nextIn = input.baseAddress.map { UnsafePointer($0 + offset) }
                var availableOut = out.count
                var nextOut = out.baseAddress
                result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                made = out.count - availableOut
                left = availableIn
            }
        }
        pendingOffset = pending.count - left
        switch result {
        case BROTLI_DECODER_RESULT_SUCCESS:
            isFinished = true
            hasMoreOutput = false
            if pendingOffset < pending.count {
                throw SesameError(.protocolError, "data after the end of the br body")
            }
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
            hasMoreOutput = false
        case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
            hasMoreOutput = true
        default:
            let code = BrotliDecoderGetErrorCode(state)
            let message = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
            throw SesameError(.protocolError, "the br body is corrupt (\(message))")
        }
        produced += piece.count
        guard produced <= limit else {
            throw SesameError(.protocolError, "the decoded body is larger than the \(limit)-byte limit")
        }
        if pendingOffset == pending.count {
            pending = []
            pendingOffset = 0
        }
        return piece.isEmpty ? nil : piece
    }

    func finish() throws {
        guard isFinished else {
            throw SesameError(.protocolError, "the br body ended before its compressed stream did")
        }
    }
}
