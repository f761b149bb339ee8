import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

/// Real TLS over loopback. Serialized: several tests measure timeouts, which two shared cores
/// running a 100 MB transfer beside them would blur.
@Suite(.serialized) struct TransportTests {
    @Test func hundredMegabytesRoundTripWithMatchingDigests() throws {
        let clientIdentity = try makeIdentity()
        let seenClient = Locked<NodeID?>(nil)
        let server = try TestServer { connection in
            seenClient.withLock { $0 = connection.peerNodeID }
            do {
                let header = try connection.readExactly(8)
                var remaining = header.withUnsafeBytes { Int(UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self))) }
                var hasher = SHA256()
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                defer { buffer.deallocate() }
                while remaining > 0 {
                    let count = try connection.read(
                        into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, remaining)]))
                    if count == 0 { return }
                    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                    remaining -= count
                }
                try connection.write(hasher.finalize().bytes)
            } catch {
                Issue.record("server failed: \(error)")
            }
        }
        defer { server.stop() }

        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.port, identity: clientIdentity,
            expected: .node(server.identity.nodeID), logger: quietLogger)
        defer { connection.close() }
        #expect(connection.peerNodeID == server.identity.nodeID)
        let chunks = 100
        var header = [UInt8](repeating: 0, count: 8)
        header.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(chunks << 20).bigEndian, as: UInt64.self) }
        try connection.write(header)
        let random = try RandomSource()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var hasher = SHA256()
        for _ in 0..<chunks {
            random.fill(&chunk)
            hasher.update(chunk)
            try chunk.withUnsafeBytes { try connection.write($0) }
        }
        let serverDigest = try connection.readExactly(32)
        let clientDigest = hasher.finalize()
        #expect(serverDigest == clientDigest.bytes)
        #expect(seenClient.current == clientIdentity.nodeID)
    }

    @Test func ipv6LoopbackAndHostnamesWork() throws {
        let listener = try TLSListener(
            identity: try makeIdentity(), bind: [(host: "[::1]", port: 0), (host: "localhost", port: 0)],
            logger: quietLogger)
        #expect(listener.boundAddresses.contains { $0.host == "::1" && $0.port != 0 })
        #expect(listener.boundAddresses.contains { $0.host == "127.0.0.1" })
        let thread = Thread {
            try? listener.run(handler: { try? $0.write(Array("hi".utf8)) })
        }
        thread.start()
        defer {
            listener.stop()
            _ = listener.waitForHandlers(timeout: .seconds(5))
        }
        let port = listener.boundAddresses.first { $0.host == "::1" }!.port
        let connection = try TLSConnection.connect(
            host: "::1", port: port, identity: try makeIdentity(), expected: .firstContact, logger: quietLogger)
        #expect(connection.remoteAddress == "[::1]:\(port)")
        #expect(try connection.readExactly(2) == Array("hi".utf8))
        connection.close()
    }

    @Test func idleTimeoutFiresOnSilentPeers() throws {
        let serverError = Locked<TLSError?>(nil)
        let server = try TestServer { connection in
            connection.idleTimeout = .milliseconds(300)
            var byte: UInt8 = 0
            do {
                _ = try withUnsafeMutableBytes(of: &byte) { try connection.read(into: $0) }
            } catch {
                serverError.withLock { $0 = error as? TLSError }
            }
        }
        defer { server.stop() }
        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.port, identity: try makeIdentity(),
            expected: .node(server.identity.nodeID), logger: quietLogger)
        connection.idleTimeout = .milliseconds(200)
        let started = Date()
        var byte: UInt8 = 0
        #expect {
            _ = try withUnsafeMutableBytes(of: &byte) { try connection.read(into: $0) }
        } throws: { error in
            guard case TLSError.timedOut(let operation, _, _) = error else { return false }
            return operation == "read"
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.19 && elapsed < 2)
        #expect(serverError.wait(timeout: 3) { $0 != nil })
        if case .timedOut = serverError.current {
        } else {
            Issue.record("server read should time out, got \(String(describing: serverError.current))")
        }
        connection.close()
    }

    @Test func closeNotifyReadsAsZeroAndUseAfterCloseThrows() throws {
        let server = try TestServer { connection in
            try? connection.write(Array("bye".utf8))
        }
        defer { server.stop() }
        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.port, identity: try makeIdentity(), expected: .firstContact,
            logger: quietLogger)
        #expect(try connection.readExactly(3) == Array("bye".utf8))
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try buffer.withUnsafeMutableBytes { try connection.read(into: $0) } == 0)
        connection.close()
        connection.close()
        #expect(throws: TLSError.self) { try connection.write(Array("late".utf8)) }
    }

    /// OpenSSL reads ahead (several records per read of the socket), so records can wait in its
    /// buffer while the socket has nothing: each read must take them without polling first.
    @Test func recordsReadAheadAreReadWithoutWaitingForTheSocket() throws {
        let release = Locked(false)
        let written = Locked(false)
        let server = try TestServer { connection in
            for index in 0..<8 { try? connection.write([UInt8](repeating: UInt8(index), count: 100)) }
            written.set(true)
            _ = release.wait(timeout: 10) { $0 }
        }
        defer {
            release.withLock { $0 = true }
            server.stop()
        }
        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.port, identity: try makeIdentity(), expected: .firstContact,
            logger: quietLogger)
        connection.idleTimeout = .seconds(5)
        // The first read brings in what has arrived; let every record arrive before it (over
        // loopback, a write the server finished is in this socket's buffer).
        try #require(written.wait(timeout: 10) { $0 }, "the server did not write its records")
        let started = Date()
        for index in 0..<8 {
            #expect(try connection.readExactly(100) == [UInt8](repeating: UInt8(index), count: 100))
        }
        // A read that polled the socket before asking OpenSSL would wait out the idle timeout.
        #expect(Date().timeIntervalSince(started) < 2)
        connection.close()
    }
}
