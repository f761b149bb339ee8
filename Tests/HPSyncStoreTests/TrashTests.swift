import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore

@Suite struct TrashTests {
    @Test func replacedVersionsAreKeptWithTheirImagesAndRestoreAsLocalEdits() throws {
        let dir = TempDirectory()
        let clock = TestClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        let photo = jpeg(7)
        let sofa = try store.add(ItemDraft(name: "Sofa", valueInDollars: 900, imageFile: dir.file("sofa.jpg", photo)))
        let lamp = try store.add(ItemDraft(name: "Lamp", serialNumber: "L-1", valueInDollars: 20))
        _ = try store.applyRemote(
            [
                IncomingRecord(
                    item: Fixtures.remoteItem(sofa.key, stamp: sofa.version.stamp.rawValue + 1, deleted: true)),
                IncomingRecord(
                    item: Fixtures.remoteItem(lamp.key, name: "Lamp v2", stamp: lamp.version.stamp.rawValue + 1)),
            ], checkpoint: nil, keepReplaced: true)
        #expect(try store.item(sofa.key)?.deleted == true)
        #expect(Fixtures.imageFiles(store).isEmpty, "the live image went with the delete")

        let entries = try store.trashEntries()
        #expect(Set(entries.map(\.key)) == [sofa.key, lamp.key])
        let trashedSofa = try #require(try store.trashEntries(key: sofa.key).first)
        #expect(trashedSofa.reason == .deleted)
        #expect(trashedSofa.image == Fixtures.ref(photo))
        #expect(try store.trashEntries(key: lamp.key).first?.reason == .overwritten)

        let restored = try store.restoreFromTrash(key: sofa.key)
        #expect(restored.name == "Sofa" && restored.valueInDollars == 900 && !restored.deleted)
        #expect(restored.version.origin == store.nodeID, "a new local edit, so it syncs on")
        #expect(Fixtures.bytes(store.imageFileURL(for: sofa.key)) == photo)
        let lampBack = try store.restoreFromTrash(key: lamp.key)
        #expect(lampBack.name == "Lamp" && lampBack.serialNumber == "L-1")
        #expect(try store.verify(repair: false).isClean)
    }

    /// A pull replacing several items copies each image into the trash once: two items with the
    /// same photo share one trash file, and an item whose file is gone is trashed without bytes
    /// (a problem `verify` reports), the pull going through.
    @Test func sharedPhotosAreTrashedOnceAndAMissingFileIsNoError() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let photo = jpeg(8)
        let first = try store.add(ItemDraft(name: "Chair", imageFile: dir.file("a.jpg", photo)))
        let second = try store.add(ItemDraft(name: "Chair too", imageFile: dir.file("b.jpg", photo)))
        let gone = try store.add(ItemDraft(name: "Gone", imageFile: dir.file("c.jpg", jpeg(9))))
        try FileManager.default.removeItem(at: store.imageFileURL(for: gone.key))
        let outcome = try store.applyRemote(
            [first, second, gone].map {
                IncomingRecord(item: Fixtures.remoteItem($0.key, name: "v2", stamp: $0.version.stamp.rawValue + 1))
            }, checkpoint: nil, keepReplaced: true)
        #expect(Set(outcome.updated) == [first.key, second.key, gone.key])
        #expect(try store.trashEntries().count == 3)
        let trashed = try FileManager.default.contentsOfDirectory(atPath: store.trashDirectory.path)
        #expect(trashed == [Fixtures.ref(photo).digest.hex], "one file for the shared photo, none for the gone one")
        #expect(try store.restoreFromTrash(key: second.key).name == "Chair too")
        #expect(Fixtures.bytes(store.imageFileURL(for: second.key)) == photo)
    }

    @Test func withoutTheFlagNothingIsKeptAndPurgeHonoursAge() throws {
        let dir = TempDirectory()
        let clock = TestClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        let a = try store.add(ItemDraft(name: "A", imageFile: dir.file("a.jpg", jpeg(1))))
        let b = try store.add(ItemDraft(name: "B"))
        _ = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(b.key, stamp: b.version.stamp.rawValue + 1, deleted: true))],
            checkpoint: nil)
        #expect(try store.trashEntries().isEmpty)
        _ = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(a.key, stamp: a.version.stamp.rawValue + 1, deleted: true))],
            checkpoint: nil, keepReplaced: true)
        let trash = store.directory.appendingPathComponent("trash")
        #expect(try FileManager.default.contentsOfDirectory(atPath: trash.path).count == 1)
        #expect(try store.purgeTrash(olderThanMilliseconds: 60_000) == 0)
        clock.set(clock.nowMilliseconds() + 120_000)
        #expect(try store.purgeTrash(olderThanMilliseconds: 60_000) == 1)
        #expect(try store.trashEntries().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: trash.path).isEmpty, "unreferenced images go too")
        #expect(throws: StoreError.notInTrash(a.key.rawValue)) { try store.restoreFromTrash(key: a.key) }
    }

    /// Issue 12 §3: the apply's own parameter decides (a server receiving a push passes it); the
    /// store has no setting of its own.
    @Test func theApplysParameterDecides() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let a = try store.add(ItemDraft(name: "A", imageFile: dir.file("a.jpg", jpeg(3))))
        let b = try store.add(ItemDraft(name: "B"))
        _ = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(a.key, stamp: a.version.stamp.rawValue + 1, deleted: true))],
            checkpoint: nil, keepReplaced: true)
        #expect(try store.trashEntries(key: a.key).first?.image == Fixtures.ref(jpeg(3)))
        _ = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(b.key, stamp: b.version.stamp.rawValue + 1))],
            checkpoint: nil, keepReplaced: false)
        #expect(try store.trashEntries(key: b.key).isEmpty)
    }

    /// A batch that replaces more versions than one INSERT takes (`TrashInsertion`: two full
    /// statements and a remainder) keeps every one of them, each row whole, in the batch's order.
    @Test func aLargeBatchKeepsEveryReplacedVersionInOrder() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let count = 2 * TrashInsertion.rowsPerStatement + 6
        var items: [Item] = []
        for index in 0..<count {
            let serial: String? = index % 2 == 0 ? "S-\(index)" : nil
            items.append(
                try store.add(ItemDraft(name: "Item \(index)", serialNumber: serial, valueInDollars: Int64(index))))
        }
        items.sort { $0.key.rawValue < $1.key.rawValue }
        var records: [IncomingRecord] = []
        for (index, item) in items.enumerated() {
            let newer = Fixtures.remoteItem(
                item.key, name: "new", stamp: item.version.stamp.rawValue + 1, deleted: index % 3 == 0)
            records.append(IncomingRecord(item: newer))
        }
        _ = try store.applyRemote(records, checkpoint: nil, keepReplaced: true)
        let entries = try store.trashEntries()
        #expect(entries.count == count)
        // Newest first: ids run against the batch's order.
        let oldestFirst = Array(entries.reversed())
        #expect(oldestFirst.map { $0.key } == items.map { $0.key })
        for (index, entry) in oldestFirst.enumerated() {
            #expect(entry.name == items[index].name && entry.serialNumber == items[index].serialNumber)
            #expect(entry.valueInDollars == items[index].valueInDollars)
            #expect(entry.reason == (index % 3 == 0 ? .deleted : .overwritten))
        }
        #expect(Set(entries.map { $0.id }).count == count)
    }

    /// A batch that fails after it trashed versions (a record whose image was never staged, as
    /// a broken peer sends) keeps none of them: the trash rows waiting to be written and those
    /// written go with the rest of the transaction.
    @Test func aFailedBatchTrashesNothing() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        var items: [Item] = []
        for index in 0..<(TrashInsertion.rowsPerStatement + 3) {
            items.append(try store.add(ItemDraft(name: "Item \(index)")))
        }
        items.sort { $0.key.rawValue < $1.key.rawValue }
        var records = items.map { item in
            IncomingRecord(item: Fixtures.remoteItem(item.key, name: "new", stamp: item.version.stamp.rawValue + 1))
        }
        let last = try #require(items.last)
        records[records.count - 1] = IncomingRecord(
            item: Fixtures.remoteItem(
                last.key, name: "new", stamp: last.version.stamp.rawValue + 1, image: Fixtures.ref(jpeg(5))))
        #expect(throws: StoreError.self) { try store.applyRemote(records, checkpoint: nil, keepReplaced: true) }
        #expect(try store.trashEntries().isEmpty)
        #expect(try items.allSatisfy { try store.item($0.key)?.name == $0.name })
    }

    /// A store whose lamp (with a photo and a creation date) a pull overwrote with a version
    /// that has neither; the trash keeps the local version.
    struct Overwritten {
        let dir = TempDirectory()
        let store: Store
        let lamp: Item
        let photo = jpeg(9)
        /// Set, the store crashes after a commit, before its image is renamed into place.
        let crash = Locked(false)

        init() throws {
            store = try Fixtures.makeStore(dir, configuration: .crashing(\.afterCommitBeforeFinalize, while: crash))
            lamp = try store.add(
                ItemDraft(
                    name: "Lamp", serialNumber: "L-1", valueInDollars: 20, dateCreatedMilliseconds: 1_234_567_890_123,
                    imageFile: dir.file("lamp.jpg", photo)))
            _ = try store.applyRemote(
                [
                    IncomingRecord(
                        item: Fixtures.remoteItem(lamp.key, name: "Lamp v2", stamp: lamp.version.stamp.rawValue + 1))
                ],
                checkpoint: nil, keepReplaced: true)
        }
    }

    @Test func restoreIsOneEditThatBringsBackTheWholeVersion() throws {
        let f = try Overwritten()
        #expect(try f.store.item(f.lamp.key)?.dateCreatedMilliseconds == 1000)
        let seq = try f.store.lastSeq
        let restored = try f.store.restoreFromTrash(key: f.lamp.key)
        #expect(try f.store.lastSeq == seq + 1, "one transaction, one seq: the edit and the image together")
        #expect(restored.name == "Lamp" && restored.serialNumber == "L-1" && restored.valueInDollars == 20)
        #expect(restored.dateCreatedMilliseconds == 1_234_567_890_123, "the creation date comes back too")
        #expect(restored.image == Fixtures.ref(f.photo))
        #expect(try f.store.item(f.lamp.key) == restored)
        #expect(Fixtures.bytes(f.store.imageFileURL(for: f.lamp.key)) == f.photo)
        #expect(Fixtures.imageFiles(f.store) == [f.lamp.key.rawValue], "no temporary left behind")
        #expect(try f.store.verify(repair: false).isClean)
    }

    @Test func restoringAVersionWithoutAnImageRemovesTheCurrentOne() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let chair = try store.add(ItemDraft(name: "Chair", valueInDollars: 50))
        _ = try store.applyRemote(
            [
                IncomingRecord(
                    item: Fixtures.remoteItem(chair.key, name: "Chair v2", stamp: chair.version.stamp.rawValue + 1))
            ],
            checkpoint: nil, keepReplaced: true)
        _ = try store.setImage(chair.key, from: dir.file("chair.jpg", jpeg(4)))
        let seq = try store.lastSeq
        let restored = try store.restoreFromTrash(key: chair.key)
        #expect(try store.lastSeq == seq + 1)
        #expect(restored.name == "Chair" && restored.image == nil)
        #expect(restored.dateCreatedMilliseconds == chair.dateCreatedMilliseconds)
        #expect(Fixtures.imageFiles(store).isEmpty, "the image the restored version did not have is unlinked")
        #expect(try store.verify(repair: false).isClean)
    }

    @Test func aCrashAfterTheRestoreCommittedIsRolledForwardOnOpen() throws {
        let f = try Overwritten()
        f.crash.set(true)
        #expect(throws: SimulatedCrash.self) { try f.store.restoreFromTrash(key: f.lamp.key) }
        let committed = try #require(try f.store.item(f.lamp.key))
        #expect(committed.name == "Lamp" && committed.image == Fixtures.ref(f.photo))
        #expect(try f.store.verify(repair: false).pending == [f.lamp.key])
        let reopened = try Fixtures.reopen(f.store)
        #expect(Fixtures.bytes(reopened.imageFileURL(for: f.lamp.key)) == f.photo)
        #expect(try reopened.verify(repair: false).isClean)
    }

    @Test func aDamagedTrashedImageRestoresNothing() throws {
        let f = try Overwritten()
        let trashed = f.store.directory.appendingPathComponent("trash").appendingPathComponent(
            SHA256.hash(f.photo).hex)
        try FileManager.default.removeItem(at: trashed)
        try Data(jpeg(10)).write(to: trashed)
        let before = try f.store.item(f.lamp.key)
        let seq = try f.store.lastSeq
        #expect {
            try f.store.restoreFromTrash(key: f.lamp.key)
        } throws: { error in
            guard case StoreError.io(let path, _) = error else { return false }
            return path == trashed.path
        }
        #expect(try f.store.item(f.lamp.key) == before)
        #expect(try f.store.lastSeq == seq)
        #expect(Fixtures.imageFiles(f.store).isEmpty, "the copy of the damaged image is removed")
        try FileManager.default.removeItem(at: trashed)
        #expect(throws: StoreError.missingImageFile(path: trashed.path)) {
            try f.store.restoreFromTrash(key: f.lamp.key)
        }
    }
}
