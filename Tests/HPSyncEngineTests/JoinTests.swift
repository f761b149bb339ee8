import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

extension Sync {
    /// `client` redeems `secret` at `server` (over a pipe, or TLS pinned to the server's node ID).
    @discardableResult
    static func join(
        _ client: TestNode, _ server: TestNode, secret: InvitationSecret, name: String = "joiner",
        over transport: Transport = .pipe
    ) throws -> JoinResult {
        var result: JoinResult?
        _ = try session(client, server, transport) { channel in
            result = try SyncClient(store: client.store, logger: quietLogger).join(
                over: channel, serverNodeID: server.nodeID, secret: secret, suggestedName: name)
            return SyncReport(direction: .pull, peer: server.name)
        } wrap: {
            $0
        }
        return try #require(result)
    }
}

@Suite struct JoinTests {
    let hour: Int64 = 3_600_000

    func refusal(_ error: any Error) -> PeerErrorMessage? {
        guard case SyncError.refusedByPeer(let peerError) = error else { return nil }
        return peerError
    }

    @Test(arguments: Transport.allCases) func aJoinerMayPullAtOnceButNotPushWithReadAccess(_ transport: Transport)
        throws
    {
        let server = try TestNode("server")
        let joiner = try TestNode("joiner")
        let item = try server.add("Piano")
        let (secret, _) = try server.store.createInvitation(permission: .read, name: nil, lifetimeMilliseconds: hour)
        let granted = try Sync.join(joiner, server, secret: secret, name: "my laptop", over: transport)
        #expect(granted == JoinResult(allow: .read, name: "my-laptop"))
        #expect(try server.store.peer(nodeID: joiner.nodeID)?.name == "my-laptop")
        try Sync.pull(joiner, from: server, over: transport)
        #expect(try joiner.store.item(item.key)?.name == "Piano")
        try joiner.add("Mine")
        #expect {
            try Sync.push(joiner, to: server, over: transport)
        } throws: { refusal($0)?.code == .readOnly }
    }

    @Test(arguments: Transport.allCases) func anInvitationWorksForOneNodeOnly(_ transport: Transport) throws {
        let server = try TestNode("server")
        let first = try TestNode("first")
        let second = try TestNode("second")
        let (secret, _) = try server.store.createInvitation(
            permission: .readWrite, name: "desk", lifetimeMilliseconds: hour)
        #expect(try Sync.join(first, server, secret: secret, over: transport).allow == .readWrite)
        #expect {
            try Sync.join(second, server, secret: secret, over: transport)
        } throws: { error in
            let message = refusal(error)
            return message?.code == .invitation && message!.message.contains("used already")
                && !message!.message.contains("desk") && !message!.message.contains(first.nodeID.short)
        }
        #expect(try server.store.peer(nodeID: second.nodeID) == nil)
        // The node that used it may repeat the join (its answer could have been lost).
        #expect(try Sync.join(first, server, secret: secret, over: transport).name == "desk")
    }

    @Test func anExpiredOrUnknownInvitationIsRefused() throws {
        let server = try TestNode("server")
        let joiner = try TestNode("joiner")
        let (secret, _) = try server.store.createInvitation(permission: .read, name: nil, lifetimeMilliseconds: hour)
        server.clock.advance(milliseconds: UInt64(hour))
        #expect {
            try Sync.join(joiner, server, secret: secret)
        } throws: { refusal($0)?.code == .invitation && refusal($0)!.message.contains("expired") }
        #expect {
            try Sync.join(joiner, server, secret: .random())
        } throws: { refusal($0)?.code == .invitation && refusal($0)!.message.contains("no such invitation") }
        #expect(try server.store.peers().isEmpty)
    }

    @Test func aJoinNeedsVersion2AndPullsStillNeedAPeerEntry() {
        let client = NodeID(certificateDER: [1])
        func decide(_ intent: SyncIntent, min: UInt32, max: UInt32) -> ServerHandshake.Decision {
            let hello = HelloMessage(
                minVersion: min, maxVersion: max, nodeID: client, storeID: .random(), intent: intent, software: "t")
            return ServerHandshake.decide(
                hello: hello, certificateNodeID: client, peer: nil, serverNodeID: NodeID(certificateDER: [2]),
                serverStoreID: .random(), software: "s")
        }
        guard case .accept(let reply) = decide(.join, min: 1, max: 2) else {
            Issue.record("refused a version 2 join from an unknown node")
            return
        }
        #expect(reply.version == 2 && reply.intent == .join)
        guard case .refuse(let old) = decide(.join, min: 1, max: 1) else {
            Issue.record("accepted a join at version 1")
            return
        }
        #expect(old.code == .incompatibleVersion && old.message.contains("INTENT_JOIN needs version 2"))
        guard case .refuse(let pull) = decide(.pull, min: 1, max: 2) else {
            Issue.record("let an unknown node pull")
            return
        }
        #expect(pull.code == .notAuthorized)
    }

    @Test func aJoinRequestOverThePreAuthorizationLimitIsRefused() throws {
        let server = try TestNode("server")
        let joiner = try TestNode("joiner")
        let (secret, _) = try server.store.createInvitation(permission: .read, name: nil, lifetimeMilliseconds: hour)
        #expect {
            _ = try Sync.session(joiner, server, .pipe) { channel in
                try channel.send(
                    .hello(
                        HelloMessage(
                            minVersion: 2, nodeID: joiner.nodeID, storeID: joiner.store.storeID, intent: .join,
                            software: "t")))
                _ = try channel.receiveMessage(expecting: "Hello")
                // The frame limit (ERROR_LIMIT) is checked before the name's (ERROR_BAD_DATA).
                try channel.send(
                    .joinRequest(JoinRequestMessage(secret: secret, name: String(repeating: "n", count: 5000))))
                let answer = try channel.receiveMessage(expecting: "Error")
                if case .error(let error) = answer { throw SyncError.refusedByPeer(error) }
                return SyncReport(direction: .pull, peer: "server")
            } wrap: {
                $0
            }
        } throws: { refusal($0)?.code == .limit }
        #expect(try server.store.peers().isEmpty)
    }
}
