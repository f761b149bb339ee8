import Foundation
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite("Image files and rows stay consistent")
struct ImageSafetyTests {
    /// Every commit is a promise: the writer syncs the WAL at each one (GRDB opens a pool in WAL
    /// mode with `synchronous = NORMAL`, which does not), before and after a write that runs
    /// without a sync on purpose (the image journal's cleanup).
    @Test func theWriterCommitsWithFullSync() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let mode = { try store.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") } }
        #expect(try mode() == 2, "FULL at open")
        _ = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", jpeg(1))))
        #expect(try mode() == 2, "FULL after a write with an image (its journal cleanup runs NORMAL)")
        #expect(try Fixtures.reopen(store).write { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 2)
    }

    @Test func crashAfterTempWrittenLeavesOnlyAnOrphanThatIsSwept() throws {
        let dir = TempDirectory()
        let crash = Locked(false)
        let store = try Fixtures.makeStore(dir, configuration: .crashing(\.afterTempWritten, while: crash))
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", jpeg(1))))
        crash.set(true)
        #expect(throws: SimulatedCrash.self) { try store.setImage(item.key, from: dir.file("2.jpg", jpeg(2))) }
        #expect(try store.item(item.key) == item)
        #expect(Fixtures.imageFiles(store).contains { $0.hasPrefix(".tmp-") })
        let reopened = try Fixtures.reopen(store)
        #expect(Fixtures.imageFiles(reopened) == [item.key.rawValue])
        #expect(Fixtures.bytes(reopened.imageFileURL(for: item.key)) == jpeg(1))
        #expect(try reopened.verify(repair: false).isClean)
    }

    @Test func crashAfterCommitIsRolledForwardOnOpen() throws {
        let dir = TempDirectory()
        let crash = Locked(false)
        let store = try Fixtures.makeStore(dir, configuration: .crashing(\.afterCommitBeforeFinalize, while: crash))
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", jpeg(1))))
        crash.set(true)
        #expect(throws: SimulatedCrash.self) { try store.setImage(item.key, from: dir.file("2.jpg", jpeg(2))) }
        #expect(try store.item(item.key)?.image == Fixtures.ref(jpeg(2)))
        let before = try store.verify(repair: false)
        #expect(before.pending == [item.key])
        #expect(before.mismatchedImages.isEmpty)
        let reopened = try Fixtures.reopen(store)
        #expect(Fixtures.bytes(reopened.imageFileURL(for: item.key)) == jpeg(2))
        #expect(Fixtures.imageFiles(reopened) == [item.key.rawValue])
        #expect(try reopened.verify(repair: false).isClean)
    }

    /// A store whose add of an item with an image committed and stopped before the rename:
    /// its image write is journaled, the temporary not yet in place.
    private func storeWithAnAddJournaledNotRenamed(_ dir: TempDirectory) throws -> Store {
        let crash = Locked(true)
        let store = try Fixtures.makeStore(dir, configuration: .crashing(\.afterCommitBeforeFinalize, while: crash))
        #expect(throws: SimulatedCrash.self) {
            try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", jpeg(1))))
        }
        crash.set(false)
        return store
    }

    @Test func verifyRepairRollsForwardToo() throws {
        let dir = TempDirectory()
        let store = try storeWithAnAddJournaledNotRenamed(dir)
        #expect(try !store.verify(repair: false).isClean)
        let repaired = try store.verify(repair: true)
        #expect(repaired.isClean)
        #expect(!repaired.repaired.isEmpty)
    }

    @Test func deleteCommitsTheTombstoneThenUnlinks() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", jpeg(1))))
        _ = try store.delete([item.key])
        #expect(try store.item(item.key)?.deleted == true)
        #expect(try store.item(item.key)?.image == nil)
        #expect(Fixtures.imageFiles(store).isEmpty)
        // A crash between the commit and the unlink leaves the file: an orphan, swept on open. It
        // loses nothing, so verify notes it and stays clean (issue 34: a monitoring job alarmed).
        let orphan = dir.file("store/images/\(item.key.rawValue)", jpeg(1))
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-86_400)], ofItemAtPath: orphan.path)
        let report = try store.verify(repair: false)
        #expect(report.isClean)
        #expect(report.orphans == [item.key.rawValue])
        #expect(report.notes.count == 1)
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

    /// `sweepIfDue`'s branches one by one: no marker, within the day (with a young and then a
    /// stale temporary), more than a day later, and a marker in the future (the clock was set back).
    @Test func sweepIfDueDecidesByTheMarkerAndTheAgeOfTemporaries() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir, configuration: StoreConfiguration(sweepAgeSeconds: 3600))
        let marker = store.directory.appendingPathComponent(".last-sweep")
        let files = FileManager.default
        let hour = 3600.0
        let now = Date()
        func place(_ name: String, age: Double) throws {
            let url = dir.file("store/images/\(name)", [1, 2, 3])
            try files.setAttributes([.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: url.path)
        }
        func setMarker(_ date: Date) throws {
            try files.setAttributes([.modificationDate: date], ofItemAtPath: marker.path)
        }
        func markerDate() throws -> Date? {
            try files.attributesOfItem(atPath: marker.path)[.modificationDate] as? Date
        }

        try place("stray", age: 2 * hour)
        try store.sweepIfDue(now: now)
        #expect(Fixtures.imageFiles(store).isEmpty, "no marker: due")
        #expect(files.fileExists(atPath: marker.path))

        try setMarker(now.addingTimeInterval(-hour))
        try place("stray", age: 2 * hour)
        try place(".tmp-young", age: 0)
        try store.sweepIfDue(now: now)
        #expect(Fixtures.imageFiles(store) == [".tmp-young", "stray"], "not due, and the temporary may be in flight")
        try place(".tmp-young", age: 2 * hour)
        try store.sweepIfDue(now: now)
        #expect(Fixtures.imageFiles(store).isEmpty, "a stale temporary runs the full sweep")
        let kept = try #require(try markerDate())
        #expect(abs(kept.timeIntervalSince(now) + hour) < 1, "only a due sweep moves the marker")

        try setMarker(now.addingTimeInterval(-25 * hour))
        try place("stray", age: 2 * hour)
        try place(".tmp-young", age: 0)
        try store.sweepIfDue(now: now)
        #expect(Fixtures.imageFiles(store) == [".tmp-young"], "a day passed: due, but young files stay")
        #expect(try #require(try markerDate()) > now.addingTimeInterval(-60), "the marker is renewed")

        try setMarker(now.addingTimeInterval(24 * hour))
        try place("stray", age: 2 * hour)
        try store.sweepIfDue(now: now)
        #expect(Fixtures.imageFiles(store) == [".tmp-young"], "a marker in the future counts as due")
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
        let item = try store.add(ItemDraft(name: "x", imageFile: dir.file("1.jpg", jpeg(1))))
        try Data(jpeg(9)).write(to: store.imageFileURL(for: item.key))
        #expect(try store.verify(repair: true).mismatchedImages == [item.key])
        try FileManager.default.removeItem(at: store.imageFileURL(for: item.key))
        #expect(try store.verify(repair: false).missingImages == [item.key])
    }
}

extension StoreConfiguration {
    /// The tests' configuration, with a `SimulatedCrash` thrown at `point` while `crash` is set
    /// (hooks come with the configuration a store is opened with).
    static func crashing(
        _ point: WritableKeyPath<TestHooks, (@Sendable () throws -> Void)?>, while crash: Locked<Bool>
    ) -> StoreConfiguration {
        var configuration = Fixtures.configuration
        configuration.testHooks[keyPath: point] = { if crash.current { throw SimulatedCrash() } }
        return configuration
    }
}

extension ImageSafetyTests {
    /// Issue 18: an apply looks journal rows up only when the table holds one. A remote
    /// version without an image that replaces a write still journaled (its commit done, its
    /// rename not) must drop that write all the same, or the next open would put the old
    /// image in place under a row that has none.
    @Test func aRemoteVersionWithoutAnImageDropsAJournaledWrite() throws {
        let dir = TempDirectory()
        let store = try storeWithAnAddJournaledNotRenamed(dir)
        let key = try #require(try store.verify(repair: false).pending.first)
        let local = try #require(try store.item(key))
        let newer = Fixtures.remoteItem(key, name: "no image", stamp: local.version.stamp.rawValue + 1_000)
        let outcome = try store.applyRemote([IncomingRecord(item: newer)], checkpoint: nil)
        #expect(outcome.updated == [key])
        #expect(try store.verify(repair: false).pending.isEmpty)
        #expect(Fixtures.imageFiles(store).isEmpty, "the journaled temporary is discarded")
        let reopened = try Fixtures.reopen(store)
        #expect(try reopened.item(key)?.image == nil)
        #expect(Fixtures.imageFiles(reopened).isEmpty)
        #expect(try reopened.verify(repair: false).isClean)
    }
}
