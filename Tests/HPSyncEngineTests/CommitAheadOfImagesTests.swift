import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncEngine
@testable import HPSyncStore

/// Issue 18: an incremental page's records that need no image bytes are committed while its
/// images arrive, in a transaction without the checkpoint. Whatever happens to the page's own
/// commit after, no change is lost: the next pull offers the page again.
@Suite struct CommitAheadOfImagesTests {
    struct Failure: Error {}

    @Test func aPageWhoseOwnCommitFailsAfterTheCommitAheadFinishesOnTheNextPull() throws {
        let a = try TestNode("a")
        // Counts b's applies while armed, and fails the second: the page's own commit.
        let armed = Locked(false)
        let applies = Locked(0)
        var configuration = StoreConfiguration()
        configuration.testHooks.beforeApply = {
            guard armed.current else { return }
            applies.set(applies.current + 1)
            if applies.current == 2 { throw Failure() }
        }
        let b = try TestNode("b", configuration: configuration)
        try a.allow(b)
        let photo = try a.add("photo", image: jpeg(1))
        let plain = try (0..<300).map { try a.add("item \($0)") }
        try Sync.pull(b, from: a)
        let checkpoint = try b.store.checkpoint(peerStore: a.store.storeID, direction: .pull)

        try a.setImage(photo.key, jpeg(2))
        for item in plain { _ = try a.store.edit(item.key, ItemEdit(valueInDollars: 7)) }
        armed.set(true)
        #expect(throws: (any Error).self) { try Sync.pull(b, from: a) }
        armed.set(false)
        #expect(applies.current == 2, "one commit ahead of the image, then the page's own")
        #expect(try plain.allSatisfy { try b.store.item($0.key)?.valueInDollars == 7 }, "committed ahead")
        #expect(b.imageBytes(photo.key) == jpeg(1), "the page's own commit did not happen")
        #expect(try b.store.checkpoint(peerStore: a.store.storeID, direction: .pull) == checkpoint)
        #expect(try b.store.verify(repair: false).isClean)

        let again = try Sync.pull(b, from: a)
        #expect(again.updated.kept == [photo.key.rawValue], "the records applied ahead are skipped")
        #expect(try b.snapshot() == a.snapshot())
        #expect(b.imageBytes(photo.key) == jpeg(2))
        #expect(try b.store.checkpoint(peerStore: a.store.storeID, direction: .pull) == (try a.store.lastSeq))
        #expect(try b.store.verify(repair: false).isClean)
    }
}
