import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// A batch keeps the rows it wrote only when a key may come again (its keys do not strictly
/// ascend): a key's second record must meet its first, whatever the order.
@Suite("applyRemote: a key a batch holds twice")
struct ApplyRemoteBatchTests {
    let base: UInt64 = VersionStamp(milliseconds: 1_700_000_000_000).rawValue

    /// Three keys in ascending text order.
    func sortedKeys() -> [ItemKey] { (0..<3).map { _ in ItemKey.random() }.sorted() }

    func record(_ key: ItemKey, _ name: String, at offset: UInt64) -> IncomingRecord {
        IncomingRecord(item: Fixtures.remoteItem(key, name: name, stamp: base + offset))
    }

    @Test func aKeyAgainAfterOthersMeetsTheRowItsFirstRecordWrote() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let keys = sortedKeys()
        let batch = [
            record(keys[2], "newer", at: 2), record(keys[0], "a", at: 1), record(keys[1], "b", at: 1),
            record(keys[2], "older", at: 1),
        ]
        let outcome = try store.applyRemote(batch, checkpoint: nil)
        #expect(outcome.inserted == [keys[2], keys[0], keys[1]])
        #expect(outcome.skipped == [keys[2]])
        #expect(try store.item(keys[2])?.name == "newer")
    }

    @Test func aKeyTwiceInARowMeetsTheRowItsFirstRecordWrote() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let keys = sortedKeys()
        let batch = [record(keys[0], "a", at: 1), record(keys[1], "newer", at: 2), record(keys[1], "older", at: 1)]
        let outcome = try store.applyRemote(batch, checkpoint: nil)
        #expect(outcome.inserted == [keys[0], keys[1]])
        #expect(outcome.skipped == [keys[1]])
        #expect(try store.item(keys[1])?.name == "newer")
        #expect(try store.lastSeq == 2)
    }

    /// The batch's first record of a key brings an image (journaled: renamed into place after
    /// the commit), its second a newer version without one: the journal row the batch itself
    /// wrote goes in the same transaction, so a crash right after the commit leaves nothing for
    /// the next open to roll forward under a record that names no image.
    @Test func anImageJournaledEarlierInTheBatchIsDroppedByTheKeysNextRecord() throws {
        let dir = TempDirectory()
        let crash = Locked(false)
        let store = try Fixtures.makeStore(dir, configuration: .crashing(\.afterCommitBeforeFinalize, while: crash))
        let keys = sortedKeys()
        let photo = jpeg(4)
        let staged = try store.stageImage(copying: dir.file("photo.jpg", photo), expected: Fixtures.ref(photo))
        let batch = [
            IncomingRecord(
                item: Fixtures.remoteItem(keys[1], name: "with photo", stamp: base + 1, image: Fixtures.ref(photo)),
                image: staged),
            record(keys[2], "c", at: 1),
            record(keys[1], "without", at: 2),
        ]
        crash.set(true)
        #expect(throws: SimulatedCrash.self) { try store.applyRemote(batch, checkpoint: nil) }
        let reopened = try Fixtures.reopen(store)
        #expect(try reopened.item(keys[1])?.name == "without")
        #expect(try reopened.item(keys[1])?.image == nil)
        #expect(!FileManager.default.fileExists(atPath: reopened.imageFileURL(for: keys[1]).path))
        #expect(try reopened.verify(repair: false).isClean)
    }

    @Test func keysInAscendingOrderAreEachAppliedOnce() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let keys = (0..<200).map { _ in ItemKey.random() }.sorted()
        let outcome = try store.applyRemote(keys.map { record($0, $0.rawValue, at: 1) }, checkpoint: nil)
        #expect(outcome.inserted == keys)
        for key in keys { #expect(try store.item(key)?.name == key.rawValue) }
    }
}
