import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite struct InvitationStoreTests {
    let hour: Int64 = 3_600_000
    let joiner = NodeID(certificateDER: Array("joiner".utf8))
    let other = NodeID(certificateDER: Array("other".utf8))

    @Test func anInvitationAddsThePeerOnceAndOnlyOnce() throws {
        let dir = TempDirectory()
        let clock = TestClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        let (secret, invitation) = try store.createInvitation(
            permission: .readWrite, name: nil, lifetimeMilliseconds: hour)
        let peer = try store.redeemInvitation(secret, joiner: joiner, suggestedName: "Anna's laptop")
        #expect(peer == Peer(name: "Anna-s-laptop", nodeID: joiner, permission: .readWrite))
        #expect(try store.peer(nodeID: joiner) == peer)
        let listed = try #require(try store.invitations().first)
        #expect(listed.digest == invitation.digest)
        #expect(listed.usedBy == joiner && listed.usedAtMilliseconds == Int64(clock.nowMilliseconds()))

        #expect(throws: InvitationRefusal.alreadyUsed) {
            try store.redeemInvitation(secret, joiner: other, suggestedName: "x")
        }
        #expect(try store.peer(nodeID: other) == nil)
        // The joiner itself may retry (its JoinAccepted may have been lost) and gets the same entry.
        #expect(try store.redeemInvitation(secret, joiner: joiner, suggestedName: "y") == peer)
        #expect(try store.peers().count == 1)
    }

    @Test func anExpiredInvitationIsRefusedAndAddsNobody() throws {
        let dir = TempDirectory()
        let clock = TestClock(1_700_000_000_000)
        let store = try Fixtures.makeStore(dir, clock: clock)
        let (secret, _) = try store.createInvitation(permission: .read, name: "box", lifetimeMilliseconds: hour)
        clock.set(1_700_000_000_000 + UInt64(hour))
        #expect(throws: InvitationRefusal.expired(atMilliseconds: 1_700_000_000_000 + hour)) {
            try store.redeemInvitation(secret, joiner: joiner, suggestedName: "x")
        }
        #expect(try store.peers().isEmpty)
        #expect(try store.invitations().first?.usedAtMilliseconds == nil)
    }

    @Test func anUnknownSecretIsRefused() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        _ = try store.createInvitation(permission: .read, name: nil, lifetimeMilliseconds: hour)
        #expect(throws: InvitationRefusal.unknown) {
            try store.redeemInvitation(.random(), joiner: joiner, suggestedName: "x")
        }
    }

    @Test func aPeerAlreadyListedIsRefusedAndTheInvitationStaysUnused() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        try store.addPeer(Peer(name: "known", nodeID: joiner, permission: .read))
        let (secret, _) = try store.createInvitation(permission: .readWrite, name: nil, lifetimeMilliseconds: hour)
        #expect(throws: InvitationRefusal.alreadyPeer(name: "known", permission: .read)) {
            try store.redeemInvitation(secret, joiner: joiner, suggestedName: "x")
        }
        #expect(try store.peer(nodeID: joiner)?.permission == .read)
        #expect(try store.redeemInvitation(secret, joiner: other, suggestedName: "other").name == "other")
    }

    @Test func namesComeFromTheInvitationElseTheJoinerAndAreMadeUnique() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        try store.addPeer(Peer(name: "laptop", nodeID: Fixtures.nodeB))
        try store.addPeer(Peer(name: "office", nodeID: Fixtures.nodeA))
        let (suggested, _) = try store.createInvitation(permission: .read, name: nil, lifetimeMilliseconds: hour)
        #expect(try store.redeemInvitation(suggested, joiner: joiner, suggestedName: "laptop").name == "laptop-2")
        let (named, _) = try store.createInvitation(permission: .read, name: "office", lifetimeMilliseconds: hour)
        #expect(try store.redeemInvitation(named, joiner: other, suggestedName: "laptop").name == "office-2")
        #expect(Peer.sanitizedName("") == "peer")
        #expect(Peer.sanitizedName("..hidden host") == "hidden-host")
        #expect(Peer.sanitizedName(String(repeating: "x", count: 100)).count == 64)
        let long = String(repeating: "x", count: 64)
        #expect(Peer.uniqueName(long) { $0 == long } == String(repeating: "x", count: 62) + "-2")
    }

    @Test func onlyTheSecretsHashIsStored() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        var secrets: [InvitationSecret] = []
        for _ in 0..<3 {
            secrets.append(try store.createInvitation(permission: .read, name: nil, lifetimeMilliseconds: hour).secret)
        }
        _ = try store.redeemInvitation(secrets[0], joiner: joiner, suggestedName: "j")
        var files = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: store.directory.path)
        where name.hasPrefix("store.sqlite") {
            files.append(try Data(contentsOf: store.directory.appendingPathComponent(name)))
        }
        for secret in secrets {
            #expect(files.range(of: Data(secret.bytes)) == nil, "a secret is in the database files")
            #expect(files.range(of: Data(secret.digest.bytes)) != nil, "the hash should be there (sanity check)")
        }
    }

    @Test func revokingDeletesTheInvitation() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let (secret, invitation) = try store.createInvitation(permission: .read, name: nil, lifetimeMilliseconds: hour)
        #expect(throws: StoreError.unknownInvitation("zz")) { try store.revokeInvitation(prefix: "zz") }
        #expect(try store.revokeInvitation(prefix: invitation.shortID.uppercased()).digest == invitation.digest)
        #expect(throws: InvitationRefusal.unknown) {
            try store.redeemInvitation(secret, joiner: joiner, suggestedName: "x")
        }
    }
}
