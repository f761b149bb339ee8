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
}
