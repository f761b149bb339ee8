import Foundation
import HPSyncCrypto
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

@Suite struct PullPushTests {
    @Test(arguments: Transport.allCases) func firstPullCopiesItemsAndImages(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        let couch = try a.add("Couch", value: 500, image: jpeg(1))
        try a.add("Lamp", value: 20)
        let report = try Sync.pull(b, from: a, over: transport)
        #expect(report.inserted.count == 2)
        #expect(report.imagesTransferred == 1)
        #expect(report.imageBytes == 3000)
        #expect(try b.snapshot() == a.snapshot())
        #expect(b.imageBytes(couch.key) == jpeg(1))
        #expect(try b.store.verify(repair: false).isClean)
    }

    @Test(arguments: Transport.allCases) func secondPullMovesNothing(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        for i in 0..<30 { try a.add("item \(i)", image: i % 10 == 0 ? jpeg(UInt8(i)) : nil) }
        try Sync.pull(b, from: a, over: transport)
        let again = try Sync.pull(b, from: a, over: transport)
        #expect(again.manifestEntries == 0)
        #expect(again.recordsTransferred == 0)
        #expect(again.imagesTransferred == 0)
        #expect(again.inserted.isEmpty && again.updated.isEmpty)
    }

    @Test(arguments: Transport.allCases) func renameMovesNoImageBytes(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        let item = try a.add("Camera", image: jpeg(7, size: 50_000))
        try Sync.pull(b, from: a, over: transport)
        _ = try a.store.edit(item.key, ItemEdit(name: "Old camera"))
        let report = try Sync.pull(b, from: a, over: transport)
        #expect(report.updated.kept == [item.key.rawValue])
        #expect(report.imagesTransferred == 0)
        #expect(report.imageBytes == 0)
        #expect(report.bytesReceived < 2_000)
        #expect(try b.store.item(item.key)?.name == "Old camera")
        #expect(b.imageBytes(item.key) == jpeg(7, size: 50_000))
    }

    @Test(arguments: Transport.allCases) func sameImageUnderAnotherKeyIsCopiedLocally(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        try a.add("First", image: jpeg(3))
        try Sync.pull(b, from: a, over: transport)
        let second = try a.add("Second", image: jpeg(3))
        let report = try Sync.pull(b, from: a, over: transport)
        #expect(report.imagesTransferred == 0)
        #expect(b.imageBytes(second.key) == jpeg(3))
        #expect(try b.store.verify(repair: false).isClean)
    }

    @Test(arguments: Transport.allCases) func deletionPropagatesAndRemovesTheImage(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        let item = try a.add("Bike", image: jpeg(2))
        try Sync.pull(b, from: a, over: transport)
        #expect(b.imageBytes(item.key) != nil)
        _ = try a.store.delete([item.key])
        let report = try Sync.pull(b, from: a, over: transport)
        #expect(report.deleted.kept == [item.key.rawValue])
        #expect(report.recordsTransferred == 0, "tombstones apply straight from the manifest")
        #expect(try b.store.item(item.key)?.deleted == true)
        #expect(b.imageBytes(item.key) == nil)
        #expect(try b.store.verify(repair: false).isClean)
    }

    @Test(arguments: Transport.allCases) func olderEditDoesNotReviveButNewerDoes(_ transport: Transport) throws {
        let clock = TestClock()
        let a = try TestNode("a", clock: clock)
        let b = try TestNode("b", clock: clock)
        try a.allow(b)
        try b.allow(a)
        let desk = try a.add("Desk")
        let lamp = try a.add("Lamp")
        try Sync.pull(b, from: a, over: transport)
        // Desk: b edits, then a deletes later. The delete is newer and wins on both.
        clock.advance(milliseconds: 1000)
        _ = try b.store.edit(desk.key, ItemEdit(name: "Desk (b)"))
        clock.advance(milliseconds: 1000)
        _ = try a.store.delete([desk.key])
        // Lamp: a deletes, then b (not having seen it) edits later. The edit is newer: revived.
        clock.advance(milliseconds: 1000)
        _ = try a.store.delete([lamp.key])
        clock.advance(milliseconds: 1000)
        _ = try b.store.edit(lamp.key, ItemEdit(name: "Lamp (b)"))
        try Sync.both(b, a, over: transport)
        #expect(try a.store.item(desk.key)?.deleted == true)
        #expect(try b.store.item(desk.key)?.deleted == true)
        #expect(try a.store.item(lamp.key)?.name == "Lamp (b)")
        #expect(try a.store.item(lamp.key)?.deleted == false)
        #expect(try a.snapshot() == b.snapshot())
        #expect(try a.store.verify(repair: false).isClean)
    }

    @Test(arguments: Transport.allCases) func bothSidesEditedDeletedAndReAddedConverge(_ transport: Transport) throws {
        let clock = TestClock()
        let a = try TestNode("a", clock: clock)
        let b = try TestNode("b", clock: clock)
        try a.allow(b)
        try b.allow(a)
        let shared = try (0..<6).map { try a.add("shared \($0)", image: $0 % 2 == 0 ? jpeg(UInt8($0)) : nil) }
        try Sync.both(b, a, over: transport)
        clock.advance(milliseconds: 10)
        _ = try a.store.edit(shared[0].key, ItemEdit(name: "a renamed 0"))
        _ = try b.store.edit(shared[0].key, ItemEdit(valueInDollars: 99))
        _ = try a.store.delete([shared[1].key])
        _ = try b.store.edit(shared[1].key, ItemEdit(name: "b edits 1 later"))
        _ = try b.store.delete([shared[2].key])
        try b.setImage(shared[3].key, jpeg(33))
        _ = try a.store.removeImage(shared[4].key)
        try a.add("only on a", image: jpeg(40))
        try b.add("only on b", image: jpeg(41))
        _ = try a.store.delete([shared[5].key])
        try a.add("re-added on a")
        try Sync.both(b, a, over: transport)
        try Sync.both(a, b, over: transport)
        #expect(try a.snapshot() == b.snapshot())
        for item in try a.snapshot() where !item.deleted && item.image != nil {
            #expect(a.imageBytes(item.key) == b.imageBytes(item.key))
        }
        #expect(try a.store.verify(repair: false).isClean)
        #expect(try b.store.verify(repair: false).isClean)
    }

    @Test(arguments: Transport.allCases) func threeNodesInAChainConverge(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        let c = try TestNode("c")
        try a.allow(b)
        try b.allow(c)
        for i in 0..<12 { try a.add("chain \(i)", image: i % 4 == 0 ? jpeg(UInt8(i)) : nil) }
        try Sync.pull(b, from: a, over: transport)
        try Sync.pull(c, from: b, over: transport)
        #expect(try c.snapshot() == a.snapshot())
        let victim = try a.snapshot()[3].key
        _ = try a.store.delete([victim])
        try Sync.pull(b, from: a, over: transport)
        try Sync.pull(c, from: b, over: transport)
        #expect(try c.store.item(victim)?.deleted == true)
        #expect(try c.snapshot() == a.snapshot())
    }

    @Test(arguments: Transport.allCases) func manyPagesAndBatches(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        for i in 0..<2_500 { try a.add("bulk \(i)", image: i % 500 == 0 ? jpeg(UInt8(i % 256)) : nil) }
        let report = try Sync.pull(b, from: a, over: transport)
        #expect(report.inserted.count == 2_500)
        #expect(report.inserted.kept.count == CappedList<String>.defaultLimit, "the report keeps the first keys only")
        #expect(report.counts.inserted == 2_500, "PageDone counts stay exact")
        #expect(report.manifestEntries == 2_500)
        #expect(try b.snapshot() == a.snapshot())
    }

    @Test(arguments: Transport.allCases) func dryRunWritesNothing(_ transport: Transport) throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        try a.add("Chair", image: jpeg(5))
        let report = try Sync.pull(b, from: a, dryRun: true, over: transport)
        #expect(report.inserted.count == 1)
        #expect(report.imagesTransferred == 1, "what the pull would fetch")
        #expect(report.peerCounts.images == 0, "no image bytes crossed")
        #expect(try b.snapshot().isEmpty)
        let real = try Sync.pull(b, from: a, over: transport)
        #expect(real.inserted.count == 1, "the checkpoint did not move")
        #expect(real.imagesTransferred == 1 && real.imageBytes == report.imageBytes)
    }

    /// A push preview is the server's: it counts what it would apply and applies nothing.
    @Test(arguments: Transport.allCases) func dryRunPushWritesNothingOnTheServer(_ transport: Transport) throws {
        let a = try TestNode("a")
        let server = try TestNode("server")
        try server.allow(a)
        let chair = try a.add("Chair", image: jpeg(5))
        _ = try a.add("Table")
        try Sync.push(a, to: server, over: transport)
        _ = try a.store.edit(chair.key, ItemEdit(valueInDollars: 9))
        _ = try a.add("Lamp")
        let before = try server.snapshot()
        let lastSeq = try server.store.lastSeq
        let report = try Sync.push(a, to: server, dryRun: true, over: transport)
        #expect(report.dryRun)
        #expect(report.peerCounts.inserted == 1)
        #expect(report.peerCounts.updated == 1)
        #expect(try server.snapshot() == before)
        #expect(try server.store.lastSeq == lastSeq)
        let real = try Sync.push(a, to: server, over: transport)
        #expect(real.peerCounts.inserted == 1, "the push checkpoint did not move")
        #expect(try server.snapshot() == a.snapshot())
    }
}
