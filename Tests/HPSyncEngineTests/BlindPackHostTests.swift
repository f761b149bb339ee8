import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// A blind store keeps sealed packs (version 6, `Docs/blind-packs-design.md`) beside sealed
/// photos: uploaded and served as photos are, each kind in its own folder, durable before the
/// next write is answered, written only by a read-write peer, checked by `verify` without a key.
@Suite struct BlindPackHostTests {
    /// A blind store, a trusted node it lets write, and the inventory key (known to the test only).
    static func host(_ permission: PeerPermission = .readWrite) throws -> (
        host: TestNode, node: TestNode, keys: BlindKeys
    ) {
        let host = try TestNode("host")
        try host.store.makeBlind()
        let node = try TestNode("node")
        try host.allow(node, permission)
        return (host, node, BlindKeys(InventoryKey.random()))
    }

    /// Runs `body` in an INTENT_BLIND session of `node` with `host`, then ends it.
    static func session<Result>(_ node: TestNode, _ host: TestNode, _ body: (BlindRemote) throws -> Result) throws
        -> Result
    {
        try withServedPipe(host.store, for: node.nodeID) { served in
            let remote = BlindRemote(channel: served.channel(), peerName: "offsite")
            _ = try remote.handshake(store: node.store, serverNodeID: host.nodeID, software: "test")
            let result = try body(remote)
            remote.end()
            return result
        }
    }

    static func sealedPack(_ keys: BlindKeys, id: BlindID, plain: [UInt8]) throws -> [UInt8] {
        var sealer = keys.sealer(.pack, id: id.bytes, plainSize: Int64(plain.count))
        return sealer.update(plain) + (try sealer.finish())
    }

    @Test func aPackIsStoredDurablyInItsOwnFolderAndServedBack() throws {
        let (host, node, keys) = try Self.host()
        let id = BlindID(bytes: BlindKeys.newPackID())!
        let plain = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let sealed = try Self.sealedPack(keys, id: id, plain: plain)
        let fetched: [UInt8] = try Self.session(node, host) { remote in
            try remote.upload(id, kind: .pack, sealed: sealed)
            // A head written after the upload: the pack is durable before its answer.
            #expect(try remote.setHead(expected: 0, BlindHeadMessage(epoch: 1, sealed: [1, 2, 3])))
            var received: [UInt8] = []
            try remote.askPhoto(id, kind: .pack)
            #expect(try remote.photo(id, kind: .pack, expectedSize: Int64(sealed.count)) { received += $0 })
            try remote.askPhoto(id, kind: .photo)
            #expect(try !remote.photo(id, kind: .photo, expectedSize: Int64(sealed.count)) { _ in }, "not a photo")
            return received
        }
        #expect(fetched == sealed)
        var opener = keys.opener(.pack, id: id.bytes, plainSize: Int64(plain.count))
        #expect(try opener.update(fetched) == plain)
        try opener.finish()
        let folder = host.store.sealedDirectory(.pack)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [id.hex])
        #expect(!FileManager.default.fileExists(atPath: host.store.sealedPhotoURL(id).path))
        #expect(try host.store.verify(repair: false).isClean)
    }

    @Test func aReadOnlyPeerCannotStoreAPack() throws {
        let (host, node, keys) = try Self.host(.read)
        let id = BlindID(bytes: BlindKeys.newPackID())!
        let sealed = try Self.sealedPack(keys, id: id, plain: [1, 2, 3])
        #expect(throws: (any Error).self) {
            try Self.session(node, host) { remote in
                try remote.upload(id, kind: .pack, sealed: sealed)
                _ = try remote.head()
            }
        }
        let folder = host.store.sealedDirectory(.pack)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).isEmpty)
    }

    @Test func verifyNamesAFileThatCannotBeASealedPack() throws {
        let (host, node, keys) = try Self.host()
        let id = BlindID(bytes: BlindKeys.newPackID())!
        let sealed = try Self.sealedPack(keys, id: id, plain: Array(repeating: 9, count: 10_000))
        try Self.session(node, host) { remote in
            try remote.upload(id, kind: .pack, sealed: sealed)
            #expect(try remote.setHead(expected: 0, BlindHeadMessage(epoch: 1, sealed: [1])))
        }
        let file = host.store.sealedURL(id, .pack)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: UInt64(sealed.count - 1))
        try handle.close()
        let report = try host.store.verify(repair: false)
        #expect(!report.isClean)
        #expect(report.blindProblems.contains { $0.contains("packs/\(id.hex) is not a sealed pack") })
    }
}
