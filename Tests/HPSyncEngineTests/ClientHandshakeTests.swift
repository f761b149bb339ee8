import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import Testing

@testable import HPSyncEngine

/// The client's side of the Hello exchange, without I/O: what it offers and what it accepts.
@Suite struct ClientHandshakeTests {
    static let client = NodeID(certificateDER: [1])
    static let server = NodeID(certificateDER: [2])

    static func hello(_ intent: SyncIntent, dryRun: Bool = false, minVersion: UInt32 = ProtocolLimits.minVersion)
        -> HelloMessage
    {
        ClientHandshake.hello(
            intent: intent, dryRun: dryRun, nodeID: client, storeID: .random(), software: "test",
            clockMilliseconds: 5, minVersion: minVersion)
    }

    static func reply(to hello: HelloMessage, version: UInt32, from node: NodeID = server) -> Message {
        .hello(HelloMessage(nodeID: node, storeID: .random(), intent: hello.intent, version: version, software: "s"))
    }

    @Test func aPushPreviewAndAJoinDoNotOfferVersion1() {
        #expect(Self.hello(.pull).minVersion == ProtocolLimits.minVersion)
        #expect(Self.hello(.push).minVersion == ProtocolLimits.minVersion)
        #expect(Self.hello(.push, dryRun: true).minVersion == 2)
        #expect(Self.hello(.push, dryRun: true).dryRun)
        #expect(!Self.hello(.pull, dryRun: true).dryRun, "a pull previews on its own")
        #expect(Self.hello(.join).minVersion == SyncIntent.join.minimumVersion)
        #expect(Self.hello(.pull, minVersion: 3).minVersion == 3)
        #expect(Self.hello(.pull).clockMilliseconds == 5)
    }

    @Test func theServersHelloIsAcceptedOnlyWithinWhatWasOffered() {
        let hello = Self.hello(.pull, minVersion: 2)
        guard
            case .accept(let server) = ClientHandshake.decide(
                reply: Self.reply(to: hello, version: 2), to: hello, serverNodeID: Self.server)
        else {
            Issue.record("refused an offered version")
            return
        }
        #expect(server.version == 2)
        guard
            case .refuse(.protocolViolation) = ClientHandshake.decide(
                reply: Self.reply(to: hello, version: 1), to: hello, serverNodeID: Self.server)
        else {
            Issue.record("accepted a version the client did not offer")
            return
        }
    }

    @Test func anotherNodeOrAnErrorIsRefused() {
        let hello = Self.hello(.pull)
        guard
            case .refuse(.nodeIDMismatch) = ClientHandshake.decide(
                reply: Self.reply(to: hello, version: 2, from: Self.client), to: hello, serverNodeID: Self.server)
        else {
            Issue.record("accepted a Hello from another node")
            return
        }
        let busy = PeerErrorMessage(code: .busy, message: "busy")
        guard
            case .refuse(.refusedByPeer(let error)) = ClientHandshake.decide(
                reply: .error(busy), to: hello, serverNodeID: Self.server)
        else {
            Issue.record("an Error is not the server's refusal")
            return
        }
        #expect(error == busy)
        guard
            case .refuse(.protocolViolation) = ClientHandshake.decide(
                reply: .endSession, to: hello, serverNodeID: Self.server)
        else {
            Issue.record("accepted something that is not a Hello")
            return
        }
    }

    @Test func clocksApartBeyondTheSkewAreNamed() {
        var server = HelloMessage(nodeID: Self.server, storeID: .random(), intent: .pull, software: "s")
        server.clockMilliseconds = 10_000
        let skew = ClientHandshake.clockSkew(
            server: server, peerName: "nas", localMilliseconds: 1_000, skewMilliseconds: 5_000)
        #expect(skew?.localIsBehind == true)
        #expect(
            ClientHandshake.clockSkew(
                server: server, peerName: "nas", localMilliseconds: 9_000, skewMilliseconds: 5_000)
                == nil)
        server.clockMilliseconds = nil
        #expect(
            ClientHandshake.clockSkew(server: server, peerName: "nas", localMilliseconds: 1, skewMilliseconds: 0) == nil
        )
    }
}
