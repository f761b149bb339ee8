import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Regression (found by the hostile-input suite): a peer that passed TLS (any self-signed
/// certificate does) could drip its Hello one byte at a time; every byte restarted the idle
/// timeout, so a few such peers held every session slot indefinitely.
///
/// CI's short round trickles against a 1 s deadline; `Scripts/torture --slowloris` against
/// `serve`'s default 10 s, a byte a second (`SlowlorisRound`).
@Suite(.serialized) struct SlowlorisTests {
    @Test func helloTrickledInOneByteAtATimeIsCutOffAtTheHandshakeTimeout() throws {
        let deadline = SlowlorisRound.handshakeTimeout(short: 1)
        let server = try TLSNode("server")
        try server.serve(
            timeouts: TLSTimeouts(
                connect: .seconds(5), handshake: .seconds(deadline), idle: .seconds(SlowlorisRound.drip * 8)))
        defer { server.stop() }
        let stranger = try TLSNode("stranger")
        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.address.port, identity: stranger.identity, expected: .firstContact,
            logger: quietLogger)
        defer { connection.close() }
        let hello = FrameEncoder.encode(
            .hello(
                HelloMessage(
                    nodeID: stranger.identity.nodeID, storeID: stranger.node.store.storeID, intent: .pull, version: 0,
                    software: String(repeating: "s", count: 200))))
        let started = ContinuousClock.now
        var cutOff = false
        for byte in hello {
            do { try connection.write([byte]) } catch {
                cutOff = true
                break
            }
            // Drip well inside the idle timeout, so only a whole-frame deadline can stop it.
            Thread.sleep(forTimeInterval: SlowlorisRound.drip)
            if ContinuousClock.now - started > .seconds(deadline + 7) { break }
            if let frame = try? connection.readAvailableFrameHeader(), frame { cutOff = true; break }
        }
        #expect(cutOff, "the server kept the trickling connection open")
        #expect(ContinuousClock.now - started < .seconds(deadline + 4))
    }
}

/// Regression (issue 12 §5): a client that completed TLS and then sent nothing, or only a frame
/// header, held its slot until the idle timeout and was told ERROR_INTERNAL "read timed out";
/// Protocol.md §2 says ERROR_PROTOCOL "Hello did not arrive in time", at the Hello deadline.
extension SlowlorisTests {
    @Test(arguments: [[], [1, 0, 0, 0, 40]] as [[UInt8]])
    func aSilentClientIsToldAtTheHelloDeadline(sending prefix: [UInt8]) throws {
        let server = try TLSNode("server")
        try server.serve(timeouts: TLSTimeouts(connect: .seconds(5), handshake: .seconds(1), idle: .seconds(6)))
        defer { server.stop() }
        let stranger = try TLSNode("stranger")
        let connection = try TLSConnection.connect(
            host: "127.0.0.1", port: server.address.port, identity: stranger.identity, expected: .firstContact,
            timeouts: TLSTimeouts(idle: .seconds(10)), logger: quietLogger)
        defer { connection.close() }
        let started = ContinuousClock.now
        if !prefix.isEmpty { try connection.write(prefix) }
        let channel = FramedChannel(stream: connection)
        let reply = try channel.receiveMessage(expecting: "Error")
        let elapsed = ContinuousClock.now - started
        guard case .error(let error) = reply else {
            Issue.record("expected an Error, got \(reply.name)")
            return
        }
        #expect(error.code == .protocolViolation)
        #expect(error.message.contains("Hello did not arrive in time"), "\(error.message)")
        #expect(elapsed < .seconds(4), "cut at the 1 s Hello deadline, not the 6 s idle timeout: \(elapsed)")
    }
}

extension TLSConnection {
    /// Whether the server has answered (an Error frame) or closed, without blocking long.
    fileprivate func readAvailableFrameHeader() throws -> Bool {
        let saved = idleTimeout
        idleTimeout = .milliseconds(10)
        defer { idleTimeout = saved }
        var byte: [UInt8] = [0]
        do {
            _ = try byte.withUnsafeMutableBytes { try read(into: $0) }
            return true
        } catch TLSError.timedOut {
            return false
        } catch {
            return true
        }
    }
}
