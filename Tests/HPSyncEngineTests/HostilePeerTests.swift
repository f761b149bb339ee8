import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

@Suite struct HostilePeerTests {
    let serverID = NodeID(certificateDER: Array("hostile".utf8))

    func entry(_ key: ItemKey, seq: Int64 = 1, stamp: UInt64 = 1_750_000_000_000 << 16) -> ManifestEntry {
        ManifestEntry(
            key: key, version: Version(stamp: VersionStamp(rawValue: stamp), origin: serverID), deleted: false, seq: seq
        )
    }

    func item(_ key: ItemKey, image: ImageRef? = nil) -> Item {
        Item(
            key: key, name: "x", dateCreatedMilliseconds: 0, image: image,
            version: Version(stamp: VersionStamp(rawValue: 1_750_000_000_000 << 16), origin: serverID))
    }

    /// Runs a hostile pull and checks it failed and left the client's store untouched and valid.
    func expectRejected(
        _ client: TestNode, _ script: HostileServer.Script, sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let before = try client.snapshot()
        #expect(throws: (any Error).self, sourceLocation: sourceLocation) {
            try HostileServer.pull(client, serverID: serverID, script: script)
        }
        #expect(try client.snapshot() == before, sourceLocation: sourceLocation)
        #expect(try client.store.verify(repair: false).isClean, sourceLocation: sourceLocation)
    }

    @Test func imageWhoseBytesDoNotMatchTheDigestIsRejected() throws {
        let client = try TestNode("client")
        let key = ItemKey.random()
        let good = jpeg(1)
        let ref = ImageRef(digest: SHA256.hash(good), size: Int64(good.count))
        try expectRejected(
            client,
            HostileServer.corruptImage(good, flipping: 100, entry: entry(key), item: item(key, image: ref)))
    }

    @Test func oversizedFrameIsRejected() throws {
        let client = try TestNode("client")
        try expectRejected(client, .init { _, stream in try HostileServer.raw(stream, [1, 0x7F, 0, 0, 0]) })
    }

    @Test func unknownFrameTypeIsRejected() throws {
        let client = try TestNode("client")
        try expectRejected(client, .init { _, stream in try HostileServer.raw(stream, [7, 0, 0, 0, 1, 0]) })
    }

    @Test func unknownMessageTypeIsRejected() throws {
        let client = try TestNode("client")
        try expectRejected(
            client, .init { _, stream in try HostileServer.raw(stream, [1, 0, 0, 0, 3, 0xF8, 0x07, 0x01]) })
    }

    @Test func messagesOutOfOrderAreRejected() throws {
        let client = try TestNode("client")
        try expectRejected(client, .init { channel, _ in try channel.send(.records([item(.random())])) })
    }

    @Test func unrequestedRecordIsRejected() throws {
        let client = try TestNode("client")
        let key = ItemKey.random()
        try expectRejected(
            client,
            .init { channel, _ in
                try channel.send(HostileServer.page([entry(key)], through: 1))
                _ = try channel.receiveMessage(expecting: "FetchRecords")
                try channel.send(.records([item(key), item(.random())]))
                _ = try? channel.receiveMessage(expecting: "anything")
            })
    }

    @Test func prematureEOFIsAnErrorAndAppliesNothing() throws {
        let client = try TestNode("client")
        let key = ItemKey.random()
        try expectRejected(
            client,
            .init { channel, _ in
                try channel.send(HostileServer.page([entry(key)], through: 1))
                _ = try channel.receiveMessage(expecting: "FetchRecords")
            })
    }

    @Test func serverHelloWithAnotherNodeIDIsRejected() throws {
        let client = try TestNode("client")
        let impostor = NodeID(certificateDER: Array("impostor".utf8))
        var script = HostileServer.Script { channel, _ in try channel.send(HostileServer.page([], through: 0)) }
        script.hello = { hello in
            var changed = hello
            changed.nodeID = impostor
            return changed
        }
        #expect {
            try HostileServer.pull(client, serverID: serverID, script: script)
        } throws: { error in
            if case SyncError.nodeIDMismatch = error { return true }
            return false
        }
    }

    @Test func seqGoingBackwardsIsRejected() throws {
        let client = try TestNode("client")
        try expectRejected(
            client,
            .init { channel, _ in
                try channel.send(.manifestPage(ManifestPage(entries: [], throughSeq: 5, isFinal: false)))
                _ = try channel.receiveMessage(expecting: "PageDone")
                try channel.send(
                    .manifestPage(ManifestPage(entries: [entry(.random(), seq: 3)], throughSeq: 6, isFinal: true)))
                _ = try? channel.receiveMessage(expecting: "anything")
            })
    }

    @Test func serverSurvivesAHostileClientAndServesTheNext() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        try a.add("Still served")
        let evil = ServedPipe(a.store, for: b.nodeID)
        try [UInt8]([1, 0xFF, 0xFF, 0xFF, 0xFF]).withUnsafeBytes { try evil.clientEnd.write($0) }
        evil.waitForServer()
        evil.close()
        #expect(try Sync.pull(b, from: a).inserted.count == 1)
    }
}

@Suite struct InterruptionTests {
    @Test(arguments: [200, 2_000, 20_000, 60_000, 140_000])
    func cutConnectionLeavesAValidStoreAndTheNextPullFinishes(_ cut: Int) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        for i in 0..<1_500 { try a.add("item \(i)", image: i % 300 == 0 ? jpeg(UInt8(i % 256), size: 40_000) : nil) }
        #expect(throws: (any Error).self) {
            try Sync.pull(b, from: a, clientStream: { CuttingStream($0, cutAfterReading: cut) })
        }
        #expect(try b.store.verify(repair: false).isClean)
        for item in try b.snapshot() {
            #expect(try a.store.item(item.key) == item, "only whole, correct records were applied")
        }
        try Sync.pull(b, from: a)
        #expect(try b.snapshot() == a.snapshot())
        #expect(try b.store.verify(repair: false).isClean)
    }

    @Test func interruptedPullResumesFromTheLastAppliedPage() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        for i in 0..<2_500 { try a.add("item \(i)") }
        #expect(throws: (any Error).self) {
            // Commit every page (1,000 records), as a version-1 sink does.
            try Sync.pull(b, from: a, commitEvery: 1_000, clientStream: { CuttingStream($0, cutAfterReading: 300_000) })
        }
        let applied = try b.snapshot().count
        #expect(applied >= 1_000, "at least the first page was committed")
        let resumed = try Sync.pull(b, from: a)
        #expect(resumed.manifestEntries <= 2_500 - 1_000, "resumed from the checkpoint, not from zero")
        #expect(try b.snapshot() == a.snapshot())
    }
}
