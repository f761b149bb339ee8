import Foundation
import HPSyncCrypto
import Testing

@testable import HPSyncStore

@Suite struct TrashTests {
    @Test func replacedVersionsAreKeptWithTheirImagesAndRestoreAsLocalEdits() throws {
        let dir = TempDirectory()
        let clock = ManualClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        let photo = Fixtures.jpeg(7)
        let sofa = try store.add(ItemDraft(name: "Sofa", valueInDollars: 900, imageFile: dir.file("sofa.jpg", photo)))
        let lamp = try store.add(ItemDraft(name: "Lamp", serialNumber: "L-1", valueInDollars: 20))
        store.keepReplacedVersions(true)
        _ = try store.applyRemote(
            [
                IncomingRecord(
                    item: Fixtures.remoteItem(sofa.key, stamp: sofa.version.stamp.rawValue + 1, deleted: true)),
                IncomingRecord(
                    item: Fixtures.remoteItem(lamp.key, name: "Lamp v2", stamp: lamp.version.stamp.rawValue + 1)),
            ], checkpoint: nil)
        store.keepReplacedVersions(false)
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

    @Test func withoutTheFlagNothingIsKeptAndPurgeHonoursAge() throws {
        let dir = TempDirectory()
        let clock = ManualClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        let a = try store.add(ItemDraft(name: "A", imageFile: dir.file("a.jpg", Fixtures.jpeg(1))))
        let b = try store.add(ItemDraft(name: "B"))
        _ = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(b.key, stamp: b.version.stamp.rawValue + 1, deleted: true))],
            checkpoint: nil)
        #expect(try store.trashEntries().isEmpty)
        store.keepReplacedVersions(true)
        _ = try store.applyRemote(
            [IncomingRecord(item: Fixtures.remoteItem(a.key, stamp: a.version.stamp.rawValue + 1, deleted: true))],
            checkpoint: nil)
        let trash = store.directory.appendingPathComponent("trash")
        #expect(try FileManager.default.contentsOfDirectory(atPath: trash.path).count == 1)
        #expect(try store.purgeTrash(olderThanMilliseconds: 60_000) == 0)
        clock.set(clock.nowMilliseconds() + 120_000)
        #expect(try store.purgeTrash(olderThanMilliseconds: 60_000) == 1)
        #expect(try store.trashEntries().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: trash.path).isEmpty, "unreferenced images go too")
        #expect(throws: StoreError.notInTrash(a.key.rawValue)) { try store.restoreFromTrash(key: a.key) }
    }
}
