import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// Tombstone garbage collection in the store: what `gc` drops, the horizon it keeps, the virtual
/// tombstones below it, and the store's half of a full reconciliation.
@Suite struct GCTests {
    static let day: UInt64 = 86_400_000
    static let start: UInt64 = 1_700_000_000_000

    /// A store with three items made on day 0, `old` deleted on day 1 and `recent` on day 100.
    struct Fixture {
        let dir = TempDirectory()
        let clock = TestClock(GCTests.start)
        let store: Store
        let old: ItemKey
        let recent: ItemKey
        let live: ItemKey

        init() throws {
            store = try Fixtures.makeStore(dir, clock: clock)
            old = try store.add(ItemDraft(name: "old")).key
            recent = try store.add(ItemDraft(name: "recent")).key
            live = try store.add(ItemDraft(name: "live")).key
            clock.set(GCTests.start + GCTests.day)
            _ = try store.delete([old])
            clock.set(GCTests.start + 100 * GCTests.day)
            _ = try store.delete([recent])
        }

        func stamp(day: UInt64) -> VersionStamp { VersionStamp(milliseconds: GCTests.start + day * GCTests.day) }
    }

    @Test func gcDropsOnlyTombstonesBeforeTheCutoffAndRecordsTheHorizon() throws {
        let f = try Fixture()
        let oldTombstone = try #require(try f.store.item(f.old))
        #expect(try f.store.gcHorizon() == .none)

        let preview = try f.store.collectGarbage(before: f.stamp(day: 50), dryRun: true)
        #expect(preview.dropped == 1)
        #expect(try f.store.item(f.old) != nil, "a dry run drops nothing")
        #expect(try f.store.gcHorizon() == .none)

        let outcome = try f.store.collectGarbage(before: f.stamp(day: 50))
        #expect(outcome.dropped == 1)
        #expect(outcome.kept == 1)
        #expect(try f.store.item(f.old) == nil)
        #expect(try f.store.item(f.recent)?.deleted == true, "a tombstone after the cutoff stays")
        #expect(try f.store.item(f.live)?.deleted == false, "live items are never collected")
        let horizon = try f.store.gcHorizon()
        #expect(horizon.stamp == VersionStamp(rawValue: oldTombstone.version.stamp.rawValue + 1))
        #expect(horizon.seq == 4, "three adds, then the deletion of `old`")
        #expect(try f.store.status().tombstones == 1)

        // A later run with an earlier cutoff drops nothing and never lowers the horizon.
        let again = try f.store.collectGarbage(before: f.stamp(day: 10))
        #expect(again.dropped == 0)
        #expect(try f.store.gcHorizon() == horizon)
        // The horizon survives reopening.
        #expect(try Fixtures.reopen(f.store).gcHorizon() == horizon)
    }

    @Test func anUnknownKeyBehavesAsATombstoneAtTheHorizon() throws {
        let f = try Fixture()
        let staleCopy = Fixtures.remoteItem(f.old, stamp: f.stamp(day: 0).rawValue + 5)
        // Before gc the real tombstone beats the stale copy; after gc the virtual one must.
        #expect(try f.store.applyRemote([IncomingRecord(item: staleCopy)], checkpoint: nil).skipped == [f.old])
        _ = try f.store.collectGarbage(before: f.stamp(day: 50))
        let horizon = try f.store.gcHorizon().stamp

        let outcome = try f.store.applyRemote([IncomingRecord(item: staleCopy)], checkpoint: nil)
        #expect(outcome.skipped == [f.old])
        #expect(outcome.inserted.isEmpty)
        #expect(try f.store.item(f.old) == nil, "a collected deletion does not come back")
        let neverSeen = ItemKey.random()
        let oldStranger = Fixtures.remoteItem(neverSeen, stamp: horizon.rawValue - 1)
        #expect(try f.store.applyRemote([IncomingRecord(item: oldStranger)], checkpoint: nil).skipped == [neverSeen])
        let bases = try f.store.mergeBases([neverSeen, f.live])
        #expect(bases[neverSeen]?.version == Version(stamp: horizon, origin: .zero))
        #expect(bases[neverSeen]?.deleted == true)
        #expect(bases[f.live]?.name == "live")

        // At the horizon or later, a version is newer than any deletion gc forgot.
        let revived = Fixtures.remoteItem(f.old, name: "made again", stamp: horizon.rawValue)
        #expect(try f.store.applyRemote([IncomingRecord(item: revived)], checkpoint: nil).inserted == [f.old])
    }

    @Test func gcLeavesTheTrashAlone() throws {
        let f = try Fixture()
        f.clock.set(GCTests.start + 102 * GCTests.day)
        let remote = Fixtures.remoteItem(f.live, stamp: f.stamp(day: 101).rawValue, deleted: true)
        _ = try f.store.applyRemote([IncomingRecord(item: remote)], checkpoint: nil, keepReplaced: true)
        #expect(try f.store.trashEntries().count == 1)
        f.clock.set(GCTests.start + 400 * GCTests.day)
        let outcome = try f.store.collectGarbage(before: f.stamp(day: 300))
        #expect(outcome.dropped == 3)
        #expect(try f.store.trashEntries().map(\.key) == [f.live], "the trash has its own retention")
        #expect(try f.store.restoreFromTrash(key: f.live).name == "live", "and restores a collected key")
    }

    /// Items stamped before the source's horizon that its listing lacks become tombstones with
    /// the final page; newer ones stay.
    @Test func reconciliationDeletesUnlistedOldItemsWithTheFinalPage() throws {
        let dir = TempDirectory()
        let clock = TestClock(Self.start)
        let store = try Fixtures.makeStore(dir, clock: clock)
        let listed = try store.add(ItemDraft(name: "still at the source")).key
        let gone = try store.add(ItemDraft(name: "deleted at the source", imageFile: dir.file("a", jpeg())))
            .key
        clock.set(Self.start + 10 * Self.day)
        let newer = try store.add(ItemDraft(name: "newer than the horizon")).key
        let horizon = VersionStamp(milliseconds: Self.start + 5 * Self.day)
        let source = StoreID.random()

        func step(_ keys: [ItemKey], horizon: VersionStamp?, first: Bool, final: Bool) -> ReconcileStep {
            ReconcileStep(
                source: source, sourceNode: Fixtures.nodeB, horizon: horizon, isFirstPage: first, listed: keys,
                isFinal: final)
        }
        let first = try store.applyRemote(
            [], checkpoint: nil, reconcile: step([listed], horizon: horizon, first: true, final: false),
            keepReplaced: true)
        #expect(first.deleted.isEmpty)
        #expect(try store.reconciliationInProgress(source: source) == horizon)

        let last = try store.applyRemote(
            [], checkpoint: nil, reconcile: step([], horizon: horizon, first: false, final: true), keepReplaced: true)
        #expect(last.deleted == [gone])
        #expect(last.reconciled == [gone])
        let tombstone = try #require(try store.item(gone))
        #expect(tombstone.deleted)
        #expect(tombstone.version == Version(stamp: horizon, origin: Fixtures.nodeB))
        #expect(!FileManager.default.fileExists(atPath: store.imageFileURL(for: gone).path))
        #expect(try store.trashEntries().map(\.key) == [gone], "like a pulled deletion, into the trash")
        #expect(try store.item(listed)?.deleted == false)
        #expect(try store.item(newer)?.deleted == false, "newer than anything the source collected")
        #expect(try store.reconciliationInProgress(source: source) == nil, "the listing is cleared")
        #expect(try store.gcHorizon().stamp == horizon, "the sink adopts the horizon")
        #expect(try store.changes(after: 0, limit: 10).last?.key == gone, "the deletion replicates onward")
    }

    @Test func anInterruptedReconciliationContinuesOrRestarts() throws {
        let dir = TempDirectory()
        let clock = TestClock(Self.start)
        let store = try Fixtures.makeStore(dir, clock: clock)
        let a = try store.add(ItemDraft(name: "a")).key
        let b = try store.add(ItemDraft(name: "b")).key
        let c = try store.add(ItemDraft(name: "c")).key
        let horizon = VersionStamp(milliseconds: Self.start + Self.day)
        let source = StoreID.random()
        func step(_ keys: [ItemKey], horizon: VersionStamp?, first: Bool, final: Bool) -> ReconcileStep {
            ReconcileStep(
                source: source, sourceNode: Fixtures.nodeB, horizon: horizon, isFirstPage: first, listed: keys,
                isFinal: final)
        }
        // Session 1 lists a and b, then breaks off.
        _ = try store.applyRemote(
            [], checkpoint: nil, reconcile: step([a, b], horizon: horizon, first: true, final: false))
        // Session 2 continues after the checkpoint, without the field: a and b still count as listed.
        let resumed = try Fixtures.reopen(store, clock: clock)
        #expect(try resumed.reconciliationInProgress(source: source) == horizon)
        let done = try resumed.applyRemote(
            [], checkpoint: nil, reconcile: step([], horizon: nil, first: true, final: true))
        #expect(done.deleted == [c])

        // A listing from 0 starts the record afresh: what an interrupted one listed no longer counts.
        _ = try resumed.applyRemote(
            [], checkpoint: nil, reconcile: step([a], horizon: horizon, first: true, final: false))
        let restarted = try resumed.applyRemote(
            [], checkpoint: nil, reconcile: step([b], horizon: horizon, first: true, final: true))
        #expect(restarted.deleted == [a])
        // Items made now are stamped after the horizon the store adopted: a reconciliation keeps them.
        let d = try resumed.add(ItemDraft(name: "d")).key
        #expect(try resumed.item(d)!.version.stamp > horizon)

        // Without a reconciliation in progress, a continuation records nothing and deletes nothing.
        let idle = try resumed.applyRemote(
            [], checkpoint: nil, reconcile: step([], horizon: nil, first: true, final: true))
        #expect(idle.deleted.isEmpty)
        #expect(try resumed.item(b)?.deleted == false)
    }

    @Test func previewCountsWithoutWriting() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let keep = try store.add(ItemDraft(name: "keep")).key
        let go = try store.add(ItemDraft(name: "go")).key
        let preview = ReconcilePreview(store: store, source: .random(), continuing: false)
        try preview.record([keep])
        #expect(try preview.victims(horizon: VersionStamp(milliseconds: 1_800_000_000_000)) == [go])
        try preview.close()
        #expect(try store.item(go)?.deleted == false)
        #expect(try store.lastSeq == 2)
    }

    @Test func theCutoffWaitsForTheStalestPeer() {
        func state(_ peer: String, _ direction: SyncDirection, success: Int64? = nil, served: Int64? = nil)
            -> PeerSyncState
        {
            PeerSyncState(
                peer: peer, direction: direction, lastSuccessAt: success, lastFailureAt: nil, lastError: nil,
                lastServedAt: served)
        }
        let states = [
            state("nas", .pull, success: 500), state("nas", .push, success: 700),
            state("laptop", .pull, served: 300), state("laptop", .push, success: 100),
        ]
        let clamped = GCCutoff.decide(requested: 1000, peers: ["nas", "laptop"], states: states, force: false)
        #expect(clamped.cutoffMilliseconds == 300, "laptop last synced (pulled from us) at 300")
        #expect(clamped.heldBackBy?.peer == "laptop")
        let free = GCCutoff.decide(requested: 200, peers: ["nas", "laptop"], states: states, force: false)
        #expect(free.cutoffMilliseconds == 200)
        #expect(free.heldBackBy == nil)

        let blocked = GCCutoff.decide(requested: 1000, peers: ["nas", "new"], states: states, force: false)
        #expect(blocked.cutoffMilliseconds == nil)
        #expect(blocked.neverSynced == ["new"])
        let forced = GCCutoff.decide(requested: 1000, peers: ["nas", "new"], states: states, force: true)
        #expect(forced.cutoffMilliseconds == 1000)
        #expect(GCCutoff.decide(requested: 1000, peers: [], states: [], force: false).cutoffMilliseconds == 1000)
    }
}
