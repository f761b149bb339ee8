import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncCrypto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Our TLS against the `openssl` command line tool, both ways, so the transport is plain
/// TLS 1.3 that another implementation (a future client written from Protocol.md) can speak.
extension TransportTests {
    @Test(.enabled(if: hasOpenSSLBinary, "needs /usr/bin/openssl"))
    func opensslClientTalksToOurListener() throws {
        let client = try makeIdentity()  // openssl presents this identity's key.pem and cert.pem
        let seen = Locked<NodeID?>(nil)
        let server = try TestServer { connection in
            seen.withLock { $0 = connection.peerNodeID }
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while line.last != UInt8(ascii: "\n"),
                (try? withUnsafeMutableBytes(of: &byte) { try connection.read(into: $0) }) == 1
            {
                line.append(byte)
            }
            try? connection.write(line)
        }
        defer { server.stop() }
        let output = try runTool(
            [
                opensslPath, "s_client", "-tls1_3", "-quiet", "-cert", client.certificateURL.path, "-key",
                client.keyURL.path, "-connect", "127.0.0.1:\(server.port)",
            ], input: "hello from openssl\n")
        #expect(output.stdout.contains("hello from openssl"), "stderr: \(output.stderr)")
        #expect(seen.current == client.nodeID)
    }

    @Test(.enabled(if: hasOpenSSLBinary, "needs /usr/bin/openssl"))
    func ourClientTalksToOpensslServer() throws {
        let serverIdentity = try makeIdentity()  // s_server uses these files
        let port = try freePort()
        let server = try RunningTool([
            opensslPath, "s_server", "-tls1_3", "-Verify", "1", "-rev", "-naccept", "1",
            "-cert", serverIdentity.certificateURL.path, "-key", serverIdentity.keyURL.path,
            "-accept", "127.0.0.1:\(port)",
        ])
        defer { _ = server.finish(timeout: 5) }
        let connection = try connectOnceListening(server, port: port, expected: .node(serverIdentity.nodeID))
        defer { connection.close() }
        #expect(connection.peerNodeID == serverIdentity.nodeID)
        try connection.write(Array("hp-sync\n".utf8))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while !received.contains(UInt8(ascii: "\n")) {
            let count = try buffer.withUnsafeMutableBytes { try connection.read(into: $0) }
            if count == 0 { break }
            received += buffer[..<count]
        }
        #expect(String(decoding: received, as: UTF8.self).hasPrefix("cnys-ph"))
    }

    @Test(.enabled(if: hasOpenSSLBinary, "needs /usr/bin/openssl"))
    func killedServerIsReportedAsTruncationNotAsEndOfData() throws {
        let serverIdentity = try makeIdentity()
        // s_server sends its stdin once its side of the handshake is done.
        let (server, port) = try startOneShotServer(serverIdentity, version: "-tls1_3", sending: "ready\n")
        let connection = try connectOnceListening(server, port: port, expected: .node(serverIdentity.nodeID))
        defer { connection.close() }
        #expect(try connection.readExactly(6) == Array("ready\n".utf8))
        kill(server.process.processIdentifier, SIGKILL)  // the kernel sends FIN; no TLS close_notify
        _ = server.finish(timeout: 5)
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect {
            let count = try buffer.withUnsafeMutableBytes { try connection.read(into: $0) }
            Issue.record("read returned \(count): \(String(decoding: buffer[..<count], as: UTF8.self))")
        } throws: { error in
            guard case TLSError.unexpectedEOF = error else { return false }
            return "\(error)".contains("close_notify")
        }
    }

    /// Regression (issue 13): every failed handshake was "authentication refused" (exit 77), even
    /// a server that speaks no TLS 1.3; only an alert about certificates means that.
    @Test(.enabled(if: hasOpenSSLBinary, "needs /usr/bin/openssl"))
    func aServerWithoutTLS13IsAProtocolMismatchNotARefusal() throws {
        let serverIdentity = try makeIdentity()
        let (server, port) = try startOneShotServer(serverIdentity, version: "-tls1_2")
        defer {
            kill(server.process.processIdentifier, SIGKILL)
            _ = server.finish(timeout: 5)
        }
        #expect {
            try connectOnceListening(server, port: port, expected: .node(serverIdentity.nodeID)).close()
        } throws: { error in
            guard case TLSError.protocolFailure = error else { return false }
            return true
        }
    }

    /// `openssl s_server` for one connection, speaking only `version` (`-tls1_3`, `-tls1_2`);
    /// it sends `sending` (its stdin, kept open) to the client once the handshake is done.
    private func startOneShotServer(_ identity: NodeIdentity, version: String, sending: String = "") throws -> (
        RunningTool, UInt16
    ) {
        let port = try freePort()
        let server = try RunningTool(
            [
                opensslPath, "s_server", version, "-naccept", "1",
                "-cert", identity.certificateURL.path, "-key", identity.keyURL.path,
                "-accept", "127.0.0.1:\(port)",
            ], input: sending, closeInput: false)
        return (server, port)
    }

    /// Connects once s_server says it listens ("ACCEPT", which `-quiet` would leave out).
    private func connectOnceListening(_ server: RunningTool, port: UInt16, expected: PeerExpectation) throws
        -> TLSConnection
    {
        let listening = server.waitForStdout { $0.contains("ACCEPT") }
        try #require(listening, "s_server did not start: \(server.finish(timeout: 1).stderr)")
        return try TLSConnection.connect(
            host: "127.0.0.1", port: port, identity: try makeIdentity(), expected: expected, logger: quietLogger)
    }

    /// A port the kernel just handed out and released.
    private func freePort() throws -> UInt16 {
        let listener = try TLSListener(
            identity: try makeIdentity(), bind: [(host: "127.0.0.1", port: 0)], logger: quietLogger)
        let port = listener.boundAddresses[0].port
        listener.stop()
        try listener.run(handler: { _ in })
        return port
    }
}
