import Foundation
import SesameTesting
import Testing

/// Peers are started so that a test talks to its own peer: a port another server took meanwhile
/// is not mistaken for the peer's, and a peer inherits none of this process's connections.
@Suite struct PeerStartTests {
    @Test func aPortListenedOnByAnotherProcessIsNotThePeers() async throws {
        // Enough sockets that the kernel's table of them runs past its first page.
        let others = try (0..<100).map { _ in try LoopbackPort.bind() }
        defer { for other in others { close(other) } }
        let listener = try LoopbackPort.bind()
        defer { close(listener) }
        let port = LoopbackPort.localPort(of: listener)
        let peer = try ChildProcess(executable: "/bin/sleep", arguments: ["10"], environment: [:], logPath: "/dev/null")
        defer { peer.stop() }
        #expect(LoopbackPort.isListening(on: port, by: getpid()))
        #expect(!LoopbackPort.isListening(on: port, by: peer.pid))
        #expect(await !LoopbackPort.waitUntilListening([port], by: peer.pid, timeout: .milliseconds(200)))
        #expect(await LoopbackPort.waitUntilListening([port], by: getpid(), timeout: .seconds(5)))
    }

    @Test func aPeerInheritsNoDescriptorBeyondItsStandardStreams() throws {
        let listener = try LoopbackPort.bind()
        defer { close(listener) }
        let inheritable = dup(listener)  // dup(2) clears close-on-exec
        defer { close(inheritable) }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("fds-\(UUID().uuidString)").path
        defer { unlink(log) }
        let peer = try ChildProcess(
            executable: "/bin/sh",
            arguments: ["-c", "ls /proc/$$/fd"],
            environment: [:],
            logPath: log
        )
        #expect(peer.wait() == 0)
        let descriptors = readText(log).split(separator: "\n").compactMap { Int32($0) }
        #expect(descriptors.contains(2))
        #expect(!descriptors.contains(inheritable), "the peer's descriptors: \(descriptors)")
    }

    @Test func aStoppedPeerLeavesNoFolderBehind() async throws {
        let nginx = try await NginxServer(pki: NginxSessionTests.pki)  // no new keys to make
        let folder = nginx.prefix
        // Inside this process's scratch folder, which goes when the process exits.
        #expect(folder.deletingLastPathComponent().path == ScratchFolder.processFolder.path)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("nginx.conf").path))
        nginx.stop()
        #expect(!FileManager.default.fileExists(atPath: folder.path))
        let first = try ScratchFolder.make("tests")
        let second = try ScratchFolder.make("tests")
        #expect(first != second)
        #expect(try FileManager.default.contentsOfDirectory(atPath: first.path).isEmpty)
    }
}
