import Foundation
import GRDB
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite("Hybrid logical clock")
struct ClockTests {
    /// The time the clock tests start from, and a day in milliseconds.
    static let start: UInt64 = 1_750_000_000_000
    static let day: UInt64 = 86_400_000

    /// A new store in a folder of its own, with a clock the test sets.
    struct ClockedStore {
        let dir = TempDirectory()
        let clock: TestClock
        let store: Store

        init(at milliseconds: UInt64 = ClockTests.start) throws {
            clock = TestClock(milliseconds)
            store = try Fixtures.makeStore(dir, clock: clock)
        }
    }

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
        let (start, day) = (Self.start, Self.day)
        let fixture = try ClockedStore()
        let (clock, old) = (fixture.clock, fixture.store)
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

/// `clock reset` restamps above every version this node made below the limit, those it has
/// since replaced here included (`localStamp`): found by the convergence property in session 13,
/// where a restamp reissued the stamp of a version replaced by an edit made a day ahead.
extension ClockTests {
    /// The restamp must not reissue that version's stamp (here the same millisecond: a tie with a
    /// version that may live on another node).
    @Test func aResetRestampsAboveEveryVersionThisNodeMadeBeforeItsClockWentAhead() throws {
        let start = Self.start
        let fixture = try ClockedStore()
        let (clock, store) = (fixture.clock, fixture.store)
        let item = try store.add(ItemDraft(name: "first"))
        let before = try store.edit(item.key, ItemEdit(name: "second, maybe pushed to a peer"))
        clock.set(start + Self.day)
        _ = try store.edit(item.key, ItemEdit(name: "made while the clock was a day ahead"))
        clock.set(start)
        let reset = try store.resetClock()
        let restamp = try #require(reset.restamped.first)
        #expect(restamp.new > before.version, "\(restamp.new) reissues or undercuts \(before.version)")
    }

    /// Nor go below it: a version made with the clock a little ahead (within the skew) before the
    /// jump would beat the restamped edit, and the user's edit would lose. The mark still comes
    /// back within the skew.
    @Test func aResetRestampsAboveAVersionMadeWithTheClockALittleAheadBeforeItJumped() throws {
        let start = Self.start
        let fixture = try ClockedStore(at: start + 300_000)
        let (clock, store) = (fixture.clock, fixture.store)
        let item = try store.add(ItemDraft(name: "made five minutes ahead, maybe pushed to a peer"))
        clock.set(start + Self.day)
        _ = try store.edit(item.key, ItemEdit(name: "made a day ahead"))
        clock.set(start)
        let reset = try store.resetClock()
        let restamp = try #require(reset.restamped.first)
        #expect(reset.restamped.count == 1)
        #expect(restamp.new > item.version, "\(restamp.new) is not above \(item.version)")
        #expect(restamp.new.stamp.milliseconds == start + 300_000)
        #expect(try store.clockAhead() == nil)
    }

    /// The stamps issued at or beyond the limit (the ones a reset replaces) bound nothing: a run
    /// that crosses the limit counts up to the stamp just below it.
    @Test func onlyStampsIssuedBelowTheLimitBoundTheReset() throws {
        let store = try ClockedStore(at: 1_000_000).store
        let limit = VersionStamp(milliseconds: 2_000)
        try store.database.write { db in
            try db.execute(sql: "DELETE FROM localStamp")
            #expect(try LocalStampRun.highestIssued(below: limit, db) == .zero)
            try LocalStampRun.record(
                [
                    LocalStampRun(
                        lowest: VersionStamp(milliseconds: 500).rawValue,
                        highest: VersionStamp(milliseconds: 600).rawValue),
                    LocalStampRun(
                        lowest: VersionStamp(milliseconds: 3_000).rawValue,
                        highest: VersionStamp(milliseconds: 4_000).rawValue),
                ], now: 1_000, db)
            #expect(try LocalStampRun.highestIssued(below: limit, db) == VersionStamp(milliseconds: 600))
            try LocalStampRun.record(
                [
                    LocalStampRun(
                        lowest: VersionStamp(milliseconds: 1_500).rawValue,
                        highest: VersionStamp(milliseconds: 2_500).rawValue)
                ],
                now: 1_000, db)
            #expect(try LocalStampRun.highestIssued(below: limit, db).rawValue == limit.rawValue - 1)
        }
    }

    /// Every local write records the run it issued, one row per run; a run older than the
    /// retention behind this clock is forgotten by the next local write.
    @Test func localWritesRecordTheirStampsAndForgetThemAfterTheRetention() throws {
        let start = Self.start
        let fixture = try ClockedStore()
        let (clock, store) = (fixture.clock, fixture.store)
        let first = try store.add(ItemDraft(name: "a"))
        let second = try store.add(ItemDraft(name: "b"))
        let runs = {
            try store.read { db in try Row.fetchAll(db, sql: "SELECT lowest, highest FROM localStamp ORDER BY lowest") }
        }
        // The same millisecond: the second add's stamp follows the first's, so the run grows.
        #expect(try runs().count == 1)
        #expect(try runs().first?["highest"] == Int64(bitPattern: second.version.stamp.rawValue))
        #expect(try runs().first?["lowest"] == Int64(bitPattern: first.version.stamp.rawValue))
        clock.set(start + LocalStampRun.retentionMilliseconds)
        _ = try store.edit(first.key, ItemEdit(name: "a year and more later"))
        #expect(try runs().count == 2)
        clock.set(start + LocalStampRun.retentionMilliseconds + 1_000)
        let last = try store.edit(first.key, ItemEdit(name: "past the retention"))
        #expect(
            try runs().map { $0["lowest"] as Int64 }.contains(Int64(bitPattern: first.version.stamp.rawValue)) == false)
        #expect(try runs().last?["highest"] == Int64(bitPattern: last.version.stamp.rawValue))
    }

    /// A store from before migration v10 has no record of the stamps it issued; when its mark is
    /// not ahead of this machine's clock, every stamp up to the mark counts as issued. When the
    /// mark is ahead, nothing is assumed (the reset would otherwise keep it ahead).
    @Test(arguments: [false, true])
    func aStoreFromBeforeTheLocalStampRecordCountsEveryStampUpToItsMark(markAhead: Bool) throws {
        let realNow = UInt64(Date().timeIntervalSince1970 * 1000)
        let fixture = try ClockedStore(at: markAhead ? realNow + 365 * Self.day : Self.start)
        let (clock, old) = (fixture.clock, fixture.store)
        let item = try old.add(ItemDraft(name: "made before v10"))
        try old.database.write { db in
            try db.execute(sql: "DROP TABLE localStamp")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v10-local-stamps'")
        }
        let store = try Fixtures.reopen(old, clock: clock)
        let runs = try store.read { db in try Row.fetchAll(db, sql: "SELECT lowest, highest FROM localStamp") }
        if markAhead {
            #expect(runs.isEmpty)
        } else {
            #expect(runs.count == 1)
            #expect(runs.first?["lowest"] == 1 as Int64)
            #expect(runs.first?["highest"] == Int64(bitPattern: item.version.stamp.rawValue))
        }
    }
}
