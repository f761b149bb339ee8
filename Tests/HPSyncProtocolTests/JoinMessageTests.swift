import Foundation
import HPSyncCrypto
import HPSyncModel
import SwiftProtobuf
import Testing

@testable import HPSyncProtocol

/// Version 2's join messages: what a server accepts from a node it does not know yet.
@Suite struct JoinMessageTests {
    func decode(_ body: Hpsync_V1_Envelope.OneOf_Body) throws -> HPSyncProtocol.Message {
        try MessageValidationTests().decode(body)
    }

    func request(secretBytes: Int = 32, name: String = "laptop") -> Hpsync_V1_JoinRequest {
        var request = Hpsync_V1_JoinRequest()
        request.secret = Data(repeating: 7, count: secretBytes)
        request.name = name
        return request
    }

    @Test func joinMessagesRoundTrip() throws {
        let secret = InvitationSecret.random()
        let messages: [HPSyncProtocol.Message] = [
            .joinRequest(JoinRequestMessage(secret: secret, name: "büro laptop")),
            .joinRequest(JoinRequestMessage(secret: secret, name: "")),
            .joinAccepted(allow: .read, name: "laptop"),
            .joinAccepted(allow: .readWrite, name: "laptop-2"),
            .hello(HelloMessage(nodeID: NodeID(certificateDER: [1]), storeID: .random(), intent: .join, software: "t")),
        ]
        for message in messages {
            #expect(try HPSyncProtocol.Message(decoding: message.serializedEnvelope()) == message)
        }
    }

    @Test(arguments: [0, 16, 31, 33, 64]) func joinRequestSecretMustBe32Bytes(_ count: Int) {
        #expect(
            throws: ProtocolError.invalidField(
                message: "JoinRequest", field: "secret", problem: "must be 32 bytes, got \(count)")
        ) {
            try decode(.joinRequest(request(secretBytes: count)))
        }
    }

    @Test func joinRequestNameIsAtMost64Bytes() throws {
        #expect(throws: Never.self) { try decode(.joinRequest(request(name: String(repeating: "n", count: 64)))) }
        // 33 two-byte characters: 66 bytes, though only 33 characters.
        #expect(throws: ProtocolError.self) {
            try decode(.joinRequest(request(name: String(repeating: "é", count: 33))))
        }
    }

    @Test func joinAcceptedNeedsAPermissionAndAValidPeerName() throws {
        var accepted = Hpsync_V1_JoinAccepted()
        accepted.allow = .readWrite
        accepted.name = "laptop"
        #expect(try decode(.joinAccepted(accepted)) == .joinAccepted(allow: .readWrite, name: "laptop"))
        var bad = accepted
        bad.allow = .unspecified
        #expect(throws: ProtocolError.self) { try decode(.joinAccepted(bad)) }
        for name in ["", "-x", "a b", "../etc", String(repeating: "a", count: 65)] {
            bad = accepted
            bad.name = name
            #expect(throws: ProtocolError.self, "\(name)") { try decode(.joinAccepted(bad)) }
        }
    }

    @Test func helloAcceptsTheJoinIntent() throws {
        var hello = Hpsync_V1_Hello()
        hello.minVersion = 2
        hello.maxVersion = 2
        hello.nodeID = Data(repeating: 1, count: 32)
        hello.storeID = Data(repeating: 2, count: 16)
        hello.intent = .join
        guard case .hello(let decoded) = try decode(.hello(hello)) else {
            Issue.record("not a Hello")
            return
        }
        #expect(decoded.intent == .join)
        #expect(SyncIntent.join.minimumVersion == 2 && SyncIntent.pull.minimumVersion == 1)
        hello.intent = .UNRECOGNIZED(5)
        #expect(throws: ProtocolError.self) { try decode(.hello(hello)) }
    }
}
