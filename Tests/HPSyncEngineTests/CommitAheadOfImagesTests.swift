import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncEngine
@testable import HPSyncStore

/// Issue 18: an incremental page's records that need no image bytes are committed while its
/// images arrive, in a transaction without the checkpoint. Whatever happens to either commit,
/// no change is lost: the next pull offers the page again.
@Suite struct CommitAheadOfImagesTests {
    struct Failure: Error {}

    /// b pulled a's photo and 300 plain items; a then replaced the photo and edited the 300. The
    /// next pull's page commits the 300 ahead of the image; b's apply number `failing` (1: the
    /// commit ahead, 2: the page's own) fails (a full disk, say), counted in `applies`.
    struct Scenario {
        let a: TestNode
        let b: TestNode
        let photo: Item
        let plain: [Item]
        let checkpoint: Int64
        let applies = Locked(0)

        init(failing: Int) throws {
            let a = try TestNode("a")
            self.a = a
            let armed = Locked(false)
            var configuration = StoreConfiguration()
            configuration.testHooks.beforeApply = { [applies] in
                guard armed.current else { return }
                applies.set(applies.current + 1)
                if applies.current == failing { throw Failure() }
            }
            let b = try TestNode("b", configuration: configuration)
            self.b = b
            try a.allow(b)
            photo = try a.add("photo", image: jpeg(1))
            plain = try (0..<300).map { try a.add("item \($0)") }
            try Sync.pull(b, from: a)
            checkpoint = try b.store.checkpoint(peerStore: a.store.storeID, direction: .pull)
            try a.setImage(photo.key, jpeg(2))
            for item in plain { _ = try a.store.edit(item.key, ItemEdit(valueInDollars: 7)) }
            armed.set(true)
            #expect(throws: Failure.self) { try Sync.pull(b, from: a) }
            armed.set(false)
        }

        /// Nothing of the page moved the checkpoint, and b is consistent.
        func expectTheCheckpointKeptAndTheStoreClean() throws {
            #expect(try b.store.checkpoint(peerStore: a.store.storeID, direction: .pull) == checkpoint)
            #expect(b.imageBytes(photo.key) == jpeg(1), "the page's own commit did not happen")
            #expect(try b.store.verify(repair: false).isClean)
        }

        /// The next pull finishes the job: b ends as a is.
        func expectTheNextPullToFinish() throws -> SyncReport {
            let again = try Sync.pull(b, from: a)
            #expect(try b.snapshot() == a.snapshot())
            #expect(b.imageBytes(photo.key) == jpeg(2))
            #expect(try b.store.checkpoint(peerStore: a.store.storeID, direction: .pull) == (try a.store.lastSeq))
            #expect(try b.store.verify(repair: false).isClean)
            return again
        }
    }

    @Test func aPageWhoseOwnCommitFailsAfterTheCommitAheadFinishesOnTheNextPull() throws {
        let scenario = try Scenario(failing: 2)
        #expect(scenario.applies.current == 2, "one commit ahead of the image, then the page's own")
        #expect(
            try scenario.plain.allSatisfy { try scenario.b.store.item($0.key)?.valueInDollars == 7 }, "committed ahead")
        try scenario.expectTheCheckpointKeptAndTheStoreClean()
        let again = try scenario.expectTheNextPullToFinish()
        #expect(again.updated.kept == [scenario.photo.key.rawValue], "the records applied ahead are skipped")
    }

    /// The commit ahead itself fails: the session stops at the page's own commit, which waits for
    /// it, and the staged image is removed with everything else of the page.
    @Test func aCommitAheadThatFailsAppliesNothingOfThePage() throws {
        let scenario = try Scenario(failing: 1)
        #expect(scenario.applies.current == 1, "the page's own commit is not attempted")
        #expect(try scenario.plain.allSatisfy { try scenario.b.store.item($0.key)?.valueInDollars == 1 })
        try scenario.expectTheCheckpointKeptAndTheStoreClean()
        let images = try FileManager.default.contentsOfDirectory(
            atPath: scenario.b.store.directory.appendingPathComponent("images").path)
        #expect(images == [scenario.photo.key.rawValue], "no staged temporary is left")
        let again = try scenario.expectTheNextPullToFinish()
        #expect(again.updated.kept.count == 301)
    }
}
