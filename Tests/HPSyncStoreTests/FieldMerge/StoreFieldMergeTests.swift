import Foundation
import GRDB
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite("Field merge in the store")
struct StoreFieldMergeTests {
    /// Every state the simulation's nodes reach (with a version-4 peer too: restamps, so
    /// candidates that agree with the value) reads back from its stored form unchanged, its
    /// joined flag too (never kept on a whole record).
    @Test(arguments: [false, true]) func storedStatesReadBackUnchanged(olderPeer: Bool) throws {
        var checked = 0
        var agreeing = 0
        for seed in 0..<300 {
            var simulation = MergeSimulation(seed: UInt64(seed), olderPeer: olderPeer)
            for _ in 0..<40 {
                try simulation.step()
                for node in simulation.nodes {
                    for (key, state) in node.states {
                        let joined = node.joined.contains(key)
                        let stored = StoredMergeState(state, joined: joined)
                        #expect(try stored.state() == state)
                        #expect((stored.fields == nil) == state.isWholeRecord)
                        let read = StoredMergeState(
                            item: stored.item, fields: stored.fields, conflicts: stored.conflicts)
                        #expect(read.joined == (joined && !state.isWholeRecord))
                        #expect(StoredMergeState.isJoined(stored.fields) == read.joined)
                        if ItemField.allCases.contains(where: { Self.agreeing($0, state) }) { agreeing += 1 }
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 1_000)
        #expect(agreeing > 0)
    }

    /// `absorbs(wholeRecord:)` is the sink's shortcut past the join: wherever it says yes, the
    /// join of the whole record with the state is the state. Checked for every state the
    /// simulation's nodes reach against the whole record of every node's item of the key (the
    /// record a version-4 peer or a store before field merge holds), and it must say yes often
    /// enough to matter.
    @Test func absorbingAWholeRecordIsTheJoin() throws {
        var absorbed = 0
        var joinsUnchanged = 0
        for seed in 0..<300 {
            var simulation = MergeSimulation(seed: UInt64(seed))
            for _ in 0..<40 {
                try simulation.step()
                let records = simulation.nodes.flatMap { $0.states.values.map(\.item) }.filter { !$0.deleted }
                for node in simulation.nodes {
                    for (key, state) in node.states {
                        for record in records where record.key == key {
                            let join = try ItemMergeState(record: record).joined(with: state)
                            if join == state { joinsUnchanged += 1 }
                            guard state.absorbs(wholeRecord: record) else { continue }
                            absorbed += 1
                            #expect(join == state, "\(state) absorbs \(record)")
                        }
                    }
                }
            }
        }
        #expect(absorbed > 1_000)
        print("absorbs(wholeRecord:): \(absorbed) of \(joinsUnchanged) joins that left the state unchanged")
    }

    static func agreeing(_ field: ItemField, _ state: ItemMergeState) -> Bool {
        switch field {
        case .name: !state.name.agreeing.isEmpty
        case .serialNumber: !state.serialNumber.agreeing.isEmpty
        case .valueInDollars: !state.valueInDollars.agreeing.isEmpty
        case .dateCreated: !state.dateCreated.agreeing.isEmpty
        case .photo: !state.photo.agreeing.isEmpty
        }
    }

    /// Sends `key`'s merge state from `source` to `target`, as a field-merging peer would.
    func send(_ key: ItemKey, from source: Store, to target: Store) throws {
        let state = try #require(try source.mergeState(key))
        var record = IncomingRecord(item: state.item)
        record.mergeState = state
        _ = try target.applyRemote([record], checkpoint: nil)
    }

    let clock = TestClock()

    func twoStores() throws -> (Store, Store, [TempDirectory]) {
        let dirs = [TempDirectory(), TempDirectory()]
        let laptop = try Fixtures.makeStore(dirs[0], clock: clock, node: Fixtures.nodeA)
        let desktop = try Fixtures.makeStore(dirs[1], clock: clock, node: Fixtures.nodeB)
        return (laptop, desktop, dirs)
    }

    @Test func theGuitarKeepsBothEdits() throws {
        let (laptop, desktop, dirs) = try twoStores()
        let guitar = try laptop.add(ItemDraft(name: "Guitar", valueInDollars: 0))
        try send(guitar.key, from: laptop, to: desktop)
        _ = try laptop.edit(guitar.key, ItemEdit(name: "Fender Stratocaster"))
        _ = try desktop.edit(guitar.key, ItemEdit(valueInDollars: 1_200))
        try send(guitar.key, from: laptop, to: desktop)
        try send(guitar.key, from: desktop, to: laptop)
        for store in [laptop, desktop] {
            let item = try #require(try store.item(guitar.key))
            #expect(item.name == "Fender Stratocaster")
            #expect(item.valueInDollars == 1_200)
            #expect(try store.conflicts().isEmpty)
        }
        #expect(try laptop.mergeState(guitar.key) == desktop.mergeState(guitar.key))
        withExtendedLifetime(dirs) {}
    }

    @Test func aClashIsListedOnBothUntilAnEditResolvesIt() throws {
        let (laptop, desktop, dirs) = try twoStores()
        let guitar = try laptop.add(ItemDraft(name: "Guitar"))
        try send(guitar.key, from: laptop, to: desktop)
        _ = try laptop.edit(guitar.key, ItemEdit(name: "Strat"))
        _ = try desktop.edit(guitar.key, ItemEdit(name: "Telecaster"))
        try send(guitar.key, from: laptop, to: desktop)
        try send(guitar.key, from: desktop, to: laptop)
        for store in [laptop, desktop] {
            #expect(try store.conflictCount() == 1)
            let conflict = try #require(try store.conflicts().first)
            #expect(conflict.field == .name)
            #expect(Set([conflict.kept, conflict.losing]) == [.text("Strat"), .text("Telecaster")])
        }
        #expect(try laptop.item(guitar.key) == desktop.item(guitar.key))

        _ = try desktop.edit(guitar.key, ItemEdit(name: "Strat"))
        #expect(try desktop.conflictCount() == 0)
        try send(guitar.key, from: desktop, to: laptop)
        #expect(try laptop.conflictCount() == 0)
        #expect(try laptop.item(guitar.key)?.name == "Strat")
        withExtendedLifetime(dirs) {}
    }

    @Test func aDeletionKeepsTheFieldsARevivalBringsBack() throws {
        let (laptop, desktop, dirs) = try twoStores()
        let guitar = try laptop.add(ItemDraft(name: "Guitar", serialNumber: "SN-1"))
        try send(guitar.key, from: laptop, to: desktop)
        _ = try laptop.delete([guitar.key])
        #expect(try laptop.mergeState(guitar.key)?.isDeleted == true)
        clock.advance(milliseconds: 10)
        _ = try desktop.edit(guitar.key, ItemEdit(valueInDollars: 7))
        try send(guitar.key, from: desktop, to: laptop)
        let revived = try #require(try laptop.item(guitar.key))
        #expect(!revived.deleted)
        #expect(revived.serialNumber == "SN-1")
        #expect(revived.valueInDollars == 7)
        withExtendedLifetime(dirs) {}
    }

    /// A state's bytes live in `itemFields`; the row keeps only the integer 1 as a marker (no
    /// payload byte: an edit does not grow its row). Every marker has its side row and no side
    /// row outlives its marker: through an edit, a received edit, a deletion and gc.
    @Test func theFieldBytesLiveBesideTheRowAndGoWithIt() throws {
        let (laptop, desktop, dirs) = try twoStores()
        func layout(_ store: Store, _ key: ItemKey) throws -> (marker: DatabaseValue?, bytes: Int?, orphans: Int) {
            try store.read { db in
                let marker = try Row.fetchOne(
                    db, sql: "SELECT fields FROM item WHERE key = ?", arguments: [key.rawValue])
                let bytes = try Int.fetchOne(
                    db, sql: "SELECT length(fields) FROM itemFields WHERE key = ?", arguments: [key.rawValue])
                let orphans =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT (SELECT COUNT(*) FROM itemFields WHERE key NOT IN
                                     (SELECT key FROM item WHERE fields IS NOT NULL))
                                 + (SELECT COUNT(*) FROM item WHERE fields IS NOT NULL AND key NOT IN
                                     (SELECT key FROM itemFields))
                            """) ?? -1
                return (marker?[0] as DatabaseValue?, bytes, orphans)
            }
        }
        let guitar = try laptop.add(ItemDraft(name: "Guitar", serialNumber: "SN-1"))
        #expect(try layout(laptop, guitar.key) == (DatabaseValue.null, nil, 0), "a whole record has neither")
        try send(guitar.key, from: laptop, to: desktop)
        clock.advance(milliseconds: 10)
        _ = try laptop.edit(guitar.key, ItemEdit(name: "Guitar (Martin)"))
        let edited = try layout(laptop, guitar.key)
        #expect(edited.marker == 1.databaseValue && (edited.bytes ?? 0) > 9 && edited.orphans == 0)
        try send(guitar.key, from: laptop, to: desktop)
        #expect(try layout(desktop, guitar.key).bytes == edited.bytes, "the receiver keeps the same state")
        #expect(try desktop.item(guitar.key)?.name == "Guitar (Martin)")
        clock.advance(milliseconds: 10)
        _ = try laptop.delete([guitar.key])
        #expect(try layout(laptop, guitar.key).marker == 1.databaseValue, "the tombstone keeps its fields")
        clock.advance(milliseconds: 10)
        let outcome = try laptop.collectGarbage(before: VersionStamp(milliseconds: clock.nowMilliseconds()))
        #expect(outcome.dropped == 1)
        #expect(try layout(laptop, guitar.key) == (nil, nil, 0), "gc takes the side row with its tombstone")
        withExtendedLifetime(dirs) {}
    }

    /// The laptop adds a guitar with a photo, the desktop receives it, the laptop deletes it:
    /// the guitar, its photo's bytes, and where the tombstone keeps them.
    func guitarDeletedOnTheLaptop(_ laptop: Store, _ desktop: Store, _ dirs: [TempDirectory]) throws
        -> (guitar: Item, photo: [UInt8], kept: URL)
    {
        let photo = jpeg(5)
        let guitar = try laptop.add(ItemDraft(name: "Guitar", imageFile: dirs[0].file("g.jpg", photo)))
        try send(guitar.key, from: laptop, to: desktop)
        _ = try laptop.delete([guitar.key])
        return (guitar, photo, laptop.trashDirectory.appendingPathComponent(Fixtures.ref(photo).digest.hex))
    }

    /// The deleted item's photo comes back with a revival, bytes and all: the delete unlinked
    /// the live file, but the tombstone keeps the photo field, so its bytes wait in the trash
    /// folder (a purge keeps them while the tombstone stands; once gc collects it, they go).
    @Test func aRevivalBringsBackTheDeletedPhotosBytes() throws {
        let (laptop, desktop, dirs) = try twoStores()
        let (guitar, photo, kept) = try guitarDeletedOnTheLaptop(laptop, desktop, dirs)
        #expect(Fixtures.imageFiles(laptop).isEmpty, "the live file went with the delete")
        #expect(try laptop.purgeTrash(olderThanMilliseconds: 0) == 0)
        #expect(Fixtures.bytes(kept) == photo, "the tombstone's photo stays through a purge")
        #expect(try laptop.verify(repair: false).isClean)

        clock.advance(milliseconds: 10)
        _ = try desktop.edit(guitar.key, ItemEdit(valueInDollars: 7))
        try send(guitar.key, from: desktop, to: laptop)
        let revived = try #require(try laptop.item(guitar.key))
        #expect(!revived.deleted && revived.valueInDollars == 7 && revived.image == Fixtures.ref(photo))
        #expect(Fixtures.bytes(laptop.imageFileURL(for: guitar.key)) == photo, "restored from the trash copy")
        #expect(try laptop.verify(repair: false).isClean)

        _ = try laptop.delete([guitar.key])
        clock.advance(milliseconds: 10)
        _ = try laptop.collectGarbage(before: VersionStamp(milliseconds: clock.nowMilliseconds() + 1))
        #expect(try laptop.item(guitar.key) == nil, "the tombstone is collected")
        _ = try laptop.purgeTrash(olderThanMilliseconds: 0)
        #expect(Fixtures.bytes(kept) == nil, "its photo goes with the next purge")
        withExtendedLifetime(dirs) {}
    }

    /// `verify` checks the photo a deleted item keeps for a revival: a damaged copy is a
    /// problem, and `--repair` copies it again from a live photo with the same digest.
    @Test func aDeletedItemsKeptPhotoIsVerifiedAndRepaired() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir, clock: clock)
        let photo = jpeg(6)
        let chair = try store.add(ItemDraft(name: "Chair", imageFile: dir.file("a.jpg", photo)))
        _ = try store.add(ItemDraft(name: "Its twin", imageFile: dir.file("b.jpg", photo)))
        _ = try store.delete([chair.key])
        let name = "trash/\(Fixtures.ref(photo).digest.hex)"
        let kept = store.directory.appendingPathComponent(name)
        #expect(try store.verify(repair: false).isClean)
        try Data(jpeg(7)).write(to: kept)
        let damaged = try store.verify(repair: false)
        #expect(damaged.mismatchedTombstonePhotos == [name])
        #expect(damaged.problems.contains { $0.contains("keeps for a revival") })
        let repaired = try store.verify(repair: true)
        #expect(repaired.isClean && repaired.repaired.contains { $0.contains(name) })
        #expect(Fixtures.bytes(kept) == photo)
        withExtendedLifetime(dir) {}
    }

    /// A revival whose kept copy was damaged meanwhile does not take those bytes: the item comes
    /// back with its image missing, remembered for healing by digest, and `verify` says so.
    @Test func aRevivalFromADamagedKeptCopyTakesNothingAndHeals() throws {
        let (laptop, desktop, dirs) = try twoStores()
        let (guitar, photo, kept) = try guitarDeletedOnTheLaptop(laptop, desktop, dirs)
        try Data(jpeg(9)).write(to: kept)
        clock.advance(milliseconds: 10)
        _ = try desktop.edit(guitar.key, ItemEdit(valueInDollars: 7))
        try send(guitar.key, from: desktop, to: laptop)
        let revived = try #require(try laptop.item(guitar.key))
        #expect(!revived.deleted && revived.image == Fixtures.ref(photo))
        #expect(Fixtures.bytes(laptop.imageFileURL(for: guitar.key)) == nil, "no damaged bytes taken")
        #expect(try laptop.verify(repair: false).missingImages == [guitar.key])
        withExtendedLifetime(dirs) {}
    }
}
