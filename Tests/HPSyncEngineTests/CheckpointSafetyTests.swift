import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncEngine

/// Regressions found by the independent Python client (Tests/Interop): cases where a
/// checkpoint could move past changes the client never received.
@Suite struct CheckpointSafetyTests {
    @Test func checkpointBeyondTheServersHistoryReadsEverythingAgain() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        // As if `a` had been restored from an older copy: b's checkpoint is past a's highest seq.
        try b.store.setCheckpoint(CheckpointUpdate(peerStore: a.store.storeID, direction: .pull, seq: 99_999))
        let item = try a.add("Made after the restore")
        let report = try Sync.pull(b, from: a)
        #expect(report.inserted.kept == [item.key.rawValue])
        #expect(try b.store.checkpoint(peerStore: a.store.storeID, direction: .pull) == (try a.store.lastSeq))
    }

    @Test func pushCheckpointBeyondOurHistoryOffersEverythingAgain() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        try b.store.setCheckpoint(CheckpointUpdate(peerStore: a.store.storeID, direction: .push, seq: 99_999))
        let item = try b.add("Made after the restore")
        try Sync.push(b, to: a)
        #expect(try a.store.item(item.key)?.name == "Made after the restore")
    }

    @Test func aRecordWhoseImageTheSourceLostIsRetriedLater() throws {
        let a = try TestNode("a")
        let b = try TestNode("b")
        try a.allow(b)
        let photo = jpeg(9)
        let item = try a.add("Photo lost on the server", image: photo)
        let other = try a.add("Plain")
        let file = a.store.imageFileURL(for: item.key)
        try FileManager.default.removeItem(at: file)
        let first = try Sync.pull(b, from: a)
        #expect(first.inserted.kept == [other.key.rawValue])
        #expect(try b.store.item(item.key) == nil, "never applied without its image")
        #expect(try b.store.verify(repair: false).isClean)
        try Data(photo).write(to: file)
        let second = try Sync.pull(b, from: a)
        #expect(second.inserted.kept == [item.key.rawValue], "the checkpoint stayed before it")
        #expect(b.imageBytes(item.key) == photo)
    }

    @Test func aRecordNewerThanItsEntryStillPassesTheClockGuard() throws {
        let client = try TestNode("client")
        let serverID = NodeID(certificateDER: Array("hostile".utf8))
        let key = ItemKey.random()
        let now = client.clock.nowMilliseconds()
        let entry = ManifestEntry(
            key: key, version: Version(stamp: VersionStamp(milliseconds: now), origin: serverID), deleted: false,
            seq: 1)
        let future = Item(
            key: key, name: "from the future", dateCreatedMilliseconds: 0,
            version: Version(stamp: VersionStamp(milliseconds: now + 86_400_000), origin: serverID))
        let report = try HostileServer.pull(
            client, serverID: serverID,
            script: .init { channel, _ in
                try channel.send(HostileServer.page([entry], through: 1))
                _ = try channel.receiveMessage(expecting: "FetchRecords")
                try channel.send(.records([future]))
                _ = try channel.receiveMessage(expecting: "PageDone")
                try channel.send(.done(ChangeCounts()))
            })
        #expect(report.refused.kept.map(\.key) == [key.rawValue])
        #expect(try client.store.item(key) == nil)
    }
}
