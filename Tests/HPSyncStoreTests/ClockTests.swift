import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite("Hybrid logical clock")
struct ClockTests {
    @Test func stampsNeverGoBackwardsEvenAcrossRestarts() throws {
        let dir = TempDirectory()
        let clock = TestClock(2_000_000_000_000)
        let store = try Fixtures.makeStore(dir, clock: clock)
        let first = try store.add(ItemDraft(name: "a"))
        #expect(first.version.stamp == VersionStamp(milliseconds: 2_000_000_000_000))
        clock.set(1_000_000_000_000)
        let second = try store.add(ItemDraft(name: "b"))
        #expect(second.version.stamp > first.version.stamp)
        let sameMillisecond = try store.add(ItemDraft(name: "c"))
        #expect(sameMillisecond.version.stamp.rawValue == second.version.stamp.rawValue + 1)

        let reopened = try Fixtures.reopen(store, clock: TestClock(500_000_000_000))
        let third = try reopened.add(ItemDraft(name: "d"))
        #expect(third.version.stamp > sameMillisecond.version.stamp)
    }

    @Test func remoteStampsRaiseTheHighWaterMark() throws {
        let dir = TempDirectory()
        let clock = TestClock(1_000_000)
        let store = try Fixtures.makeStore(dir, clock: clock)
        let remote = Fixtures.remoteItem(ItemKey.random(), stamp: VersionStamp(milliseconds: 1_000_500).rawValue)
        _ = try store.applyRemote([IncomingRecord(item: remote)], checkpoint: nil)
        let local = try store.edit(remote.key, ItemEdit(name: "edited after seeing it"))
        #expect(local.version.stamp > remote.version.stamp)
        #expect(local.version > remote.version)
    }

    /// A store made before migration v8 had no remote high-water mark; opening it starts the mark
    /// from the newest version another node made that the store holds (not from its own edits),
    /// so `clock reset` restamps above that version once an edit made with a clock ahead
    /// replaced it.
    @Test func aStoreFromBeforeTheRemoteHighWaterMarkStartsItFromTheNewestRemoteVersionItHolds() throws {
        let dir = TempDirectory()
        let start: UInt64 = 1_750_000_000_000
        let day: UInt64 = 86_400_000
        let clock = TestClock(start)
        let old = try Fixtures.makeStore(dir, clock: clock)
        let older = Fixtures.remoteItem(ItemKey.random(), stamp: VersionStamp(milliseconds: start + 100).rawValue)
        let newest = Fixtures.remoteItem(ItemKey.random(), stamp: VersionStamp(milliseconds: start + 500).rawValue)
        _ = try old.applyRemote([IncomingRecord(item: older), IncomingRecord(item: newest)], checkpoint: nil)
        clock.set(start + day)
        let local = try old.add(ItemDraft(name: "made here while the clock was a day ahead"))
        // The store as v7 left it: no remoteHighWater column, migration v8 not applied.
        try old.database.write { db in
            try db.execute(sql: "ALTER TABLE meta DROP COLUMN remoteHighWater")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v8-remote-high-water'")
        }

        let store = try Fixtures.reopen(old, clock: clock)
        let meta = try #require(try store.read { try MetaRecord.fetchOne($0, key: 1) })
        #expect(meta.remoteMark == newest.version.stamp, "not \(meta.remoteHighWater)")
        #expect(meta.remoteMark < local.version.stamp)

        _ = try store.edit(newest.key, ItemEdit(name: "edited while the clock was a day ahead"))
        clock.set(start)
        let reset = try store.resetClock()
        let restamp = try #require(reset.restamped.first { $0.key == newest.key })
        #expect(restamp.new.stamp > newest.version.stamp, "the restamped edit must beat the version it replaced")
    }
}

extension ClockTests {
    /// A known bug, found by the convergence property in session 13 (it predates that session):
    /// a version this node made before its clock went ahead, and then replaced here with an
    /// edit stamped ahead, bounds nothing at `clock reset`, which restamps from now. The restamp
    /// can then reissue that version's stamp (here in the same millisecond: a tie with a version
    /// that may live on another node) or go below it (a clock a little ahead before the jump:
    /// the user's edit loses). Wrapped as a known issue until the reset knows the highest stamp
    /// it issued below the limit; the wrapper fails once the bug is fixed, so it is removed then.
    @Test func aResetRestampsAboveEveryVersionThisNodeMadeBeforeItsClockWentAhead() throws {
        let dir = TempDirectory()
        let start: UInt64 = 1_750_000_000_000
        let clock = TestClock(start)
        let store = try Fixtures.makeStore(dir, clock: clock)
        let item = try store.add(ItemDraft(name: "first"))
        let before = try store.edit(item.key, ItemEdit(name: "second, maybe pushed to a peer"))
        clock.set(start + 86_400_000)
        _ = try store.edit(item.key, ItemEdit(name: "made while the clock was a day ahead"))
        clock.set(start)
        let reset = try store.resetClock()
        let restamp = try #require(reset.restamped.first)
        withKnownIssue("clock reset ignores this node's own stamps that it replaced locally") {
            #expect(restamp.new > before.version, "\(restamp.new) reissues or undercuts \(before.version)")
        }
    }
}
