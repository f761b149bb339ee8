import Foundation
import Testing

@testable import HPSyncStore

@Suite("Image files and rows stay consistent")
struct ImageSafetyTests {
    @Test func crashAfterTempWrittenLeavesOnlyAnOrphanThatIsSwept() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", Fixtures.jpeg(1))))
        store.hooks.set(TestHooks(afterTempWritten: { throw SimulatedCrash() }))
        #expect(throws: SimulatedCrash.self) { try store.setImage(item.key, from: dir.file("2.jpg", Fixtures.jpeg(2))) }
        #expect(try store.item(item.key) == item)
        #expect(Fixtures.imageFiles(store).contains { $0.hasPrefix(".tmp-") })
        let reopened = try Fixtures.reopen(store)
        #expect(Fixtures.imageFiles(reopened) == [item.key.rawValue])
        #expect(Fixtures.bytes(reopened.imageFileURL(for: item.key)) == Fixtures.jpeg(1))
        #expect(try reopened.verify(repair: false).isClean)
    }

    @Test func crashAfterCommitIsRolledForwardOnOpen() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", Fixtures.jpeg(1))))
        store.hooks.set(TestHooks(afterCommitBeforeFinalize: { throw SimulatedCrash() }))
        #expect(throws: SimulatedCrash.self) { try store.setImage(item.key, from: dir.file("2.jpg", Fixtures.jpeg(2))) }
        #expect(try store.item(item.key)?.image == Fixtures.ref(Fixtures.jpeg(2)))
        let before = try store.verify(repair: false)
        #expect(before.pending == [item.key])
        #expect(before.mismatchedImages.isEmpty)
        let reopened = try Fixtures.reopen(store)
        #expect(Fixtures.bytes(reopened.imageFileURL(for: item.key)) == Fixtures.jpeg(2))
        #expect(Fixtures.imageFiles(reopened) == [item.key.rawValue])
        #expect(try reopened.verify(repair: false).isClean)
    }

    @Test func verifyRepairRollsForwardToo() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        store.hooks.set(TestHooks(afterCommitBeforeFinalize: { throw SimulatedCrash() }))
        #expect(throws: SimulatedCrash.self) {
            try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", Fixtures.jpeg(1))))
        }
        store.hooks.set(TestHooks())
        #expect(try !store.verify(repair: false).isClean)
        let repaired = try store.verify(repair: true)
        #expect(repaired.isClean)
        #expect(!repaired.repaired.isEmpty)
    }

    @Test func deleteCommitsTheTombstoneThenUnlinks() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", Fixtures.jpeg(1))))
        _ = try store.delete([item.key])
        #expect(try store.item(item.key)?.deleted == true)
        #expect(try store.item(item.key)?.image == nil)
        #expect(Fixtures.imageFiles(store).isEmpty)
        // A crash between the commit and the unlink leaves the file: it is an orphan, swept on open.
        _ = dir.file("store/images/\(item.key.rawValue)", Fixtures.jpeg(1))
        #expect(try !store.verify(repair: false).isClean)
        let reopened = try Fixtures.reopen(store)
        #expect(Fixtures.imageFiles(reopened).isEmpty)
        #expect(try reopened.verify(repair: false).isClean)
    }

    /// The full orphan check reads every item with an image, so opening runs it at most daily,
    /// or whenever a stale temporary shows an interrupted write; `verify --repair` always does.
    @Test func openSweepsOrphansDailyOrWhenTemporariesAreStale() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        _ = try Fixtures.reopen(store)  // first open: sweeps, and marks the day
        _ = dir.file("store/images/stray", [1, 2, 3])
        _ = try Fixtures.reopen(store)
        #expect(Fixtures.imageFiles(store).count == 1, "not due again within the day")
        _ = dir.file("store/images/.tmp-interrupted", [1])
        _ = try Fixtures.reopen(store)
        #expect(Fixtures.imageFiles(store).isEmpty, "a stale temporary triggers the full sweep")
        _ = dir.file("store/images/stray", [1, 2, 3])
        #expect(try store.verify(repair: true).isClean)
        #expect(Fixtures.imageFiles(store).isEmpty)
    }

    @Test func sweepOnlyTouchesOldFiles() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir, configuration: StoreConfiguration(sweepAgeSeconds: 3600))
        _ = dir.file("store/images/.tmp-inflight", [1, 2, 3])
        _ = dir.file("store/images/stray", [1, 2, 3])
        #expect(try store.sweep(olderThan: 3600).isEmpty)
        let report = try store.verify(repair: true)
        #expect(Set(report.inFlight) == [".tmp-inflight", "stray"])
        #expect(Fixtures.imageFiles(store).count == 2)
        #expect(Set(try store.sweep(olderThan: 0)) == [".tmp-inflight", "stray"])
        #expect(Fixtures.imageFiles(store).isEmpty)
    }

    @Test func tamperedImageIsReported() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", Fixtures.jpeg(1))))
        try Data(Fixtures.jpeg(9)).write(to: store.imageFileURL(for: item.key))
        #expect(try store.verify(repair: true).mismatchedImages == [item.key])
        try FileManager.default.removeItem(at: store.imageFileURL(for: item.key))
        #expect(try store.verify(repair: false).missingImages == [item.key])
    }
}
