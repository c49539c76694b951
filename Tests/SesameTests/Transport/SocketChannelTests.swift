import Foundation
import Testing

@testable import Sesame

/// The socket channel's output buffer against a real kernel socket (one end of a socket pair):
/// what the kernel does not take waits, in order, and a dead peer is a failure that drops it.
// Serialized: these synchronous tests hold a concurrency thread while they run; one at a time,
// they leave the other threads to the tests that wait on the loop and on child processes.
@Suite(.serialized) struct SocketChannelTests {
    static func pair() throws -> (channel: SocketChannel, peer: Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw SesameError(.ioError, errnoText()) }
        return (SocketChannel(socket: Socket(takingOwnership: fds[0]), loop: .shared), fds[1])
    }

    @Test func whatTheKernelDoesNotTakeWaitsInOrder() throws {
        let (channel, peer) = try Self.pair()
        defer { Glibc.close(peer) }
        let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ ($0 >> 9)) }
        channel.enqueue(Array(bytes[..<(1 << 18)]))
        channel.appendOutput { $0.append(contentsOf: bytes[(1 << 18)...]) }
        #expect(channel.flush() == .wouldBlock, "1 MiB does not fit in a socket pair's buffer")
        #expect(channel.hasPendingOutput)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for _ in 0..<10_000 where received.count < bytes.count {
            _ = channel.flush()
            let count = buffer.withUnsafeMutableBytes { Glibc.read(peer, $0.baseAddress, $0.count) }
            if count > 0 { received += buffer[..<count] }
        }
        #expect(received == bytes)
        #expect(channel.flush() == .flushed)
        #expect(!channel.hasPendingOutput)
    }

    @Test func aClosedPeerFailsTheFlushAndDropsWhatWaited() throws {
        let (channel, peer) = try Self.pair()
        Glibc.close(peer)
        channel.enqueue(Array("lost".utf8))
        #expect(channel.flush() == .failed(EPIPE))
        #expect(!channel.hasPendingOutput)
        channel.close()
        #expect(channel.socket.isClosed)
    }
}
