import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// The joined flag and the restamp before a version-4 peer (Protocol.md 5.9 "Older peers").
@Suite("Joined flag and restamps")
struct JoinedFlagTests {
    let key = ItemKey.random()
    let laptop = Fixtures.nodeA
    let desktop = Fixtures.nodeB
    let old = NodeID(certificateDER: Array("old node".utf8))

    func version(_ milliseconds: UInt64, _ node: NodeID) -> Version {
        Version(stamp: VersionStamp(milliseconds: milliseconds), origin: node)
    }

    func record(_ name: String, value: Int64, at version: Version) -> ItemMergeState {
        ItemMergeState(
            record: Item(key: key, name: name, valueInDollars: value, dateCreatedMilliseconds: 500, version: version))
    }

    /// The case the property found: the old node's record (a rename) and the desktop's later
    /// edit of the value join, at the desktop's version, to contents neither record shows.
    func oldRenameAndDesktopValue() throws -> (fromOld: ItemMergeState, onDesktop: ItemMergeState) {
        var onDesktop = record("Guitar", value: 0, at: version(1_000, laptop))
        try onDesktop.apply(FieldEdit(valueInDollars: 1_200), at: version(3_000, desktop))
        return (record("Old name", value: 0, at: version(2_000, old)), onDesktop)
    }

    @Test func aJoinThatNoRecordShowsIsJoined() throws {
        let (fromOld, onDesktop) = try oldRenameAndDesktopValue()
        let joined = try fromOld.joined(with: onDesktop)
        #expect(joined.version == version(3_000, desktop))
        #expect(joined.item.name == "Old name" && joined.item.valueInDollars == 1_200)
        #expect(joined.isJoined(from: [(fromOld, false), (onDesktop, false)]))
        #expect(joined.isJoined(from: [(onDesktop, false), (fromOld, false)]))
    }

    @Test func aJoinThatAnUnflaggedInputOfItsVersionShowsIsNotJoined() throws {
        var onLaptop = record("Guitar", value: 0, at: version(1_000, laptop))
        try onLaptop.apply(FieldEdit(name: "Strat"), at: version(2_000, laptop))
        var onDesktop = onLaptop
        try onDesktop.apply(FieldEdit(valueInDollars: 7), at: version(3_000, desktop))
        let joined = try onLaptop.joined(with: onDesktop)
        #expect(!joined.isJoined(from: [(onLaptop, false), (onDesktop, false)]))
        // Only an unflagged input vouches; an unflagged one of another version does not.
        #expect(joined.isJoined(from: [(onLaptop, false), (onDesktop, true)]))
        #expect(joined.isJoined(from: [(onLaptop, false)]))
    }

    /// A deletion that wins is the record of its version: a tombstone is never joined.
    @Test func aWinningDeletionIsNotJoined() throws {
        var onLaptop = record("Guitar", value: 0, at: version(1_000, laptop))
        var onDesktop = onLaptop
        try onLaptop.delete(at: version(3_000, laptop))
        try onDesktop.apply(FieldEdit(valueInDollars: 7), at: version(2_000, desktop))
        let joined = try onDesktop.joined(with: onLaptop)
        #expect(joined.isDeleted)
        #expect(!joined.isJoined(from: [(onDesktop, false), (onLaptop, false)]))
    }

    @Test func aRestampShowsTheSameAtANewVersionAndResolvesConflicts() throws {
        let (fromOld, onDesktop) = try oldRenameAndDesktopValue()
        let joined = try fromOld.joined(with: onDesktop)
        #expect(joined.conflicts.count == 1, "the old node's value 0 against the desktop's 1,200")
        let restamped = try joined.restamped(at: version(4_000, laptop))
        var expected = joined.item
        expected.version = version(4_000, laptop)
        #expect(restamped.item == expected)
        #expect(restamped.conflicts.isEmpty)
        #expect(!restamped.isWholeRecord, "an edit: every field based on its previous version")
    }

    /// Two nodes restamp one joined state on their own: concurrent edits of every field to
    /// equal values. The greater wins, and no field lists the other as a conflict.
    @Test func twoRestampsOfOneStateAreNoClash() throws {
        let (fromOld, onDesktop) = try oldRenameAndDesktopValue()
        let joined = try fromOld.joined(with: onDesktop)
        let byLaptop = try joined.restamped(at: version(4_000, laptop))
        let byDesktop = try joined.restamped(at: version(4_000, desktop))
        let merged = try byLaptop.joined(with: byDesktop)
        #expect(try merged == byDesktop.joined(with: byLaptop))
        let greater = max(byLaptop.version, byDesktop.version)
        #expect(merged.version == greater)
        #expect(merged.item == (greater == byLaptop.version ? byLaptop.item : byDesktop.item))
        #expect(merged.conflicts.isEmpty)
        #expect(merged.name.candidates.count == 2 && merged.name.agreeing.count == 1, "kept for the join")
        #expect(!merged.isJoined(from: [(byLaptop, false), (byDesktop, false)]))
        // Values that differ are a clash, as before: a concurrent rename wins over both.
        var renamed = joined
        try renamed.apply(FieldEdit(name: "Strat"), at: version(5_000, old))
        let clash = try merged.joined(with: renamed).conflicts
        #expect(clash.map(\.losing) == [.text("Old name"), .text("Old name")])
        #expect(clash.map(\.kept) == [.text("Strat"), .text("Strat")])
    }

    // MARK: - In the store

    let clock = TestClock()

    /// `key`'s record as a version-5 source sends it: merge state and joined flag.
    func send(_ key: ItemKey, from source: Store, to target: Store) throws {
        let item = try #require(try source.records([key]).first)
        var record = IncomingRecord(item: item)
        record.joinsFields = true
        record.mergeState = item.mergeState
        _ = try target.applyRemote([record], checkpoint: nil)
    }

    /// The stores flag the join, keep the flag across a version-5 sync, restamp it once each,
    /// and after exchanging their restamps list no conflict.
    @Test func storesFlagJoinsAndRestampThemWithoutAClash() throws {
        let dirs = [TempDirectory(), TempDirectory()]
        let onLaptop = try Fixtures.makeStore(dirs[0], clock: clock, node: laptop)
        let onDesktop = try Fixtures.makeStore(dirs[1], clock: clock, node: desktop)
        let guitar = try onLaptop.add(ItemDraft(name: "Guitar", valueInDollars: 0))
        try send(guitar.key, from: onLaptop, to: onDesktop)
        clock.advance(milliseconds: 10)
        // The old node's rename, taken whole from a record-level session.
        var renamed = try #require(try onLaptop.item(guitar.key))
        renamed.name = "Old name"
        renamed.version = Version(stamp: VersionStamp(milliseconds: clock.nowMilliseconds()), origin: old)
        _ = try onLaptop.applyRemote([IncomingRecord(item: renamed)], checkpoint: nil)
        #expect(try onLaptop.records([guitar.key]).first?.joined == false)
        clock.advance(milliseconds: 10)
        _ = try onDesktop.edit(guitar.key, ItemEdit(valueInDollars: 1_200))
        try send(guitar.key, from: onDesktop, to: onLaptop)
        try send(guitar.key, from: onLaptop, to: onDesktop)
        var versions: [Version] = []
        for store in [onLaptop, onDesktop] {
            let item = try #require(try store.records([guitar.key]).first)
            #expect(item.joined && item.name == "Old name" && item.valueInDollars == 1_200)
            #expect(try store.conflictCount() == 1)
            let lastSeq = try store.lastSeq
            #expect(try store.restampJoinedItems() == [guitar.key])
            #expect(try store.restampJoinedItems() == [])
            let restamped = try #require(try store.records([guitar.key]).first)
            #expect(!restamped.joined && restamped.version > item.version)
            #expect(restamped.name == "Old name" && restamped.valueInDollars == 1_200)
            #expect(try store.lastSeq == lastSeq + 1)
            #expect(try store.conflictCount() == 0)
            versions.append(restamped.version)
        }
        try send(guitar.key, from: onLaptop, to: onDesktop)
        try send(guitar.key, from: onDesktop, to: onLaptop)
        for store in [onLaptop, onDesktop] {
            let item = try #require(try store.records([guitar.key]).first)
            #expect(item.version == versions.max() && !item.joined)
            #expect(try store.conflictCount() == 0)
            #expect(try store.conflicts().isEmpty)
            #expect(try store.mergeState(guitar.key)?.name.agreeing.count == 1)
        }
        #expect(try onLaptop.mergeState(guitar.key) == onDesktop.mergeState(guitar.key))
        withExtendedLifetime(dirs) {}
    }
}
