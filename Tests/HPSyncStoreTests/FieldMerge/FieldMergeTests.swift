import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@Suite("Field merge")
struct FieldMergeTests {
    let key = ItemKey.random()
    let laptop = Fixtures.nodeA
    let desktop = Fixtures.nodeB

    func version(_ milliseconds: UInt64, _ node: NodeID) -> Version {
        Version(stamp: VersionStamp(milliseconds: milliseconds), origin: node)
    }

    /// The guitar both machines hold, made on the laptop at 1,000.
    var guitar: ItemMergeState {
        ItemMergeState(
            record: Item(
                key: key, name: "Guitar", valueInDollars: 0, dateCreatedMilliseconds: 500,
                version: version(1_000, laptop)))
    }

    @Test func editsOfDifferentFieldsBothSurvive() throws {
        var onLaptop = guitar
        var onDesktop = guitar
        try onLaptop.apply(FieldEdit(name: "Fender Stratocaster"), at: version(2_000, laptop))
        try onDesktop.apply(FieldEdit(valueInDollars: 1_200), at: version(1_500, desktop))
        let merged = try onLaptop.joined(with: onDesktop)
        #expect(try merged == onDesktop.joined(with: onLaptop))
        #expect(merged.item.name == "Fender Stratocaster")
        #expect(merged.item.valueInDollars == 1_200)
        #expect(merged.item.version == version(2_000, laptop))
        #expect(merged.conflicts.isEmpty)
    }

    @Test func aClashKeepsTheLoserUntilAnEditResolvesIt() throws {
        var onLaptop = guitar
        var onDesktop = guitar
        try onLaptop.apply(FieldEdit(name: "Strat"), at: version(2_000, laptop))
        try onDesktop.apply(FieldEdit(name: "Telecaster"), at: version(3_000, desktop))
        var merged = try onLaptop.joined(with: onDesktop)
        #expect(merged.item.name == "Telecaster")
        let conflict = try #require(merged.conflicts.first)
        #expect(merged.conflicts.count == 1)
        #expect(conflict.field == .name)
        #expect(conflict.kept == .text("Telecaster"))
        #expect(conflict.losing == .text("Strat"))
        #expect(conflict.losingVersion == version(2_000, laptop))

        // The laptop takes the losing value back: an edit, which resolves the clash everywhere.
        try merged.apply(FieldEdit(name: "Strat"), at: version(4_000, laptop))
        #expect(merged.conflicts.isEmpty)
        let onDesktopLater = try onDesktop.joined(with: onLaptop).joined(with: merged)
        #expect(onDesktopLater.conflicts.isEmpty)
        #expect(onDesktopLater.item.name == "Strat")
    }

    @Test func wholeRecordsMergeAsBefore() throws {
        let older = guitar
        let newer = ItemMergeState(
            record: Item(
                key: key, name: "Amp", valueInDollars: 9, dateCreatedMilliseconds: 1, version: version(2_000, desktop)))
        let merged = try older.joined(with: newer)
        #expect(merged == newer)
        #expect(merged.conflicts.isEmpty)
        #expect(merged.isWholeRecord)
    }

    @Test func aNewerEditRevivesAnOlderOneDoesNot() throws {
        var deleted = guitar
        try deleted.delete(at: version(3_000, laptop))
        var older = guitar
        try older.apply(FieldEdit(valueInDollars: 5), at: version(2_000, desktop))
        #expect(try deleted.joined(with: older).isDeleted)
        var newer = guitar
        try newer.apply(FieldEdit(valueInDollars: 7), at: version(4_000, desktop))
        let revived = try deleted.joined(with: newer)
        #expect(!revived.isDeleted)
        #expect(revived.item.valueInDollars == 7)
        #expect(revived.item.name == "Guitar")
    }

    /// A tombstone that dropped the fields it absorbed would make the order of syncs matter:
    /// the revived item would take a field's older value or its newer one depending on whether
    /// the tombstone met the newer value before the revival.
    @Test func aTombstoneKeepsWhatARevivalBringsBack() throws {
        var tombstone = guitar
        try tombstone.delete(at: version(5_000, laptop))
        var renamed = guitar
        try renamed.apply(FieldEdit(name: "Renamed"), at: version(2_000, desktop))
        var revived = guitar
        try revived.apply(
            FieldEdit(valueInDollars: 3), at: version(6_000, NodeID(certificateDER: Array("node C".utf8))))
        let one = try tombstone.joined(with: renamed).joined(with: revived)
        let other = try tombstone.joined(with: renamed.joined(with: revived))
        #expect(one == other)
        #expect(one.item.name == "Renamed")
        #expect(one.item.valueInDollars == 3)
    }

    /// One edit that reached a node by two ways, once without its base (through a peer that
    /// merges whole records), is one candidate: the one without a base, which is newer than all.
    @Test func oneVersionIsOneCandidate() throws {
        let early = FieldCandidate(value: "early", version: version(1_000, desktop), base: nil)!
        let withBase = FieldCandidate(value: "late", version: version(3_000, laptop), base: version(500, laptop))!
        let withoutBase = FieldCandidate(value: "late", version: version(3_000, laptop), base: nil)!
        let kept = FieldState([early, withBase])
        #expect(kept.candidates.count == 2)
        let state = FieldState([early, withBase, withoutBase])
        #expect(state.candidates == [withoutBase])
        #expect(
            FieldState([early]).joined(with: FieldState([withoutBase])).joined(with: FieldState([withBase])) == state)
        #expect(
            FieldState([withBase]).joined(with: FieldState([early])).joined(with: FieldState([withoutBase])) == state)
    }

    @Test func aBaseMustLieBelowItsVersion() throws {
        #expect(FieldCandidate(value: "x", version: version(1_000, laptop), base: version(1_000, laptop)) == nil)
        var state = guitar
        #expect(throws: FieldMergeError.self) { try state.apply(FieldEdit(name: "x"), at: version(1_000, laptop)) }
        #expect(throws: FieldMergeError.self) { try state.delete(at: version(900, desktop)) }
        #expect(state == guitar)
    }
}
