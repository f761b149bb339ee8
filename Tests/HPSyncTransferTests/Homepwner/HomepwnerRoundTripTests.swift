import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore
@testable import HPSyncTransfer

@Suite("Homepwner export, round trip and idempotence")
struct HomepwnerRoundTripTests {
    let fixtures = HomepwnerFixtures.self

    /// A store with the fixture items, two of them with images.
    func populatedStore(_ dir: TempDirectory) throws -> Store {
        let store = try Fixtures.makeStore(dir)
        let folder = fixtures.folder(
            dir, file: "items.archive", fixtures.swiftArchive(),
            images: [fixtures.keys[0]: jpeg(11, size: 5000), fixtures.keys[1]: Fixtures.png(12)])
        _ = try store.importHomepwner(from: folder)
        return store
    }

    func content(_ store: Store) throws -> [[String]] {
        try store.items().map { item in
            [
                item.key.rawValue, item.name, item.serialNumber ?? "<nil>", String(item.valueInDollars),
                String(item.dateCreatedMilliseconds),
                item.image.map { _ in Fixtures.bytes(store.imageFileURL(for: item.key))!.description } ?? "-",
            ]
        }
    }

    @Test(arguments: [
        HomepwnerExportFormat.archive(.swift), .archive(.objectiveC), .plist,
    ])
    func exportThenImportIntoAFreshStoreIsTheSameInventory(format: HomepwnerExportFormat) throws {
        let dir = TempDirectory()
        let source = try populatedStore(dir)
        let exported = dir.url.appendingPathComponent("exported")
        let report = try source.exportHomepwner(to: exported, format: format)
        #expect(report.items == 3)
        #expect(report.images == 2)
        let copyDir = TempDirectory()
        let copy = try Fixtures.makeStore(copyDir, node: Fixtures.nodeB)
        let imported = try copy.importHomepwner(from: exported)
        #expect(imported.changes.inserted.count == 3)
        #expect(try content(copy) == content(source))
    }

    @Test func exportedArchiveHasTheAppsLayout() throws {
        let dir = TempDirectory()
        let store = try populatedStore(dir)
        let out = dir.url.appendingPathComponent("out")
        _ = try store.exportHomepwner(to: out, format: .archive(.objectiveC))
        let bytes = try Data(contentsOf: out.appendingPathComponent("items.archive"))
        #expect(bytes.starts(with: Array("bplist00".utf8)))
        let parsed = try PlistValue.parse(bytes)
        guard case .array(let objects)? = parsed["$objects"] else {
            Issue.record("no $objects")
            return
        }
        #expect(objects.first == .string("$null"))
        let classNames = objects.compactMap { object -> String? in
            if case .string(let name)? = object["$classname"] { return name }
            return nil
        }
        #expect(Set(classNames) == ["NSArray", "BNRItem", "NSDate"])
    }

    @Test func objectiveCExportRefusesValuesOver32Bits() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        // Out of today's range: a row from before it, written straight into the database.
        let yacht = try store.add(ItemDraft(name: "Yacht"))
        try ExtremeRecords.overwrite(
            yacht.key, with: ExtremeFields(name: "Yacht", serial: nil, value: 3_000_000_000, date: 0),
            inStore: store.directory)
        #expect(throws: HomepwnerError.self) {
            try store.exportHomepwner(to: dir.url.appendingPathComponent("o"), format: .archive(.objectiveC))
        }
        _ = try store.exportHomepwner(to: dir.url.appendingPathComponent("s"), format: .archive(.swift))
    }

    @Test func reimportingTheSameFolderChangesNothing() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let folder = fixtures.folder(
            dir, file: "items.archive", fixtures.objectiveCArchive(), images: [fixtures.keys[0]: jpeg()])
        let first = try store.importHomepwner(from: folder)
        #expect(first.changes.inserted.count == 3)
        let seq = try store.lastSeq
        let before = try store.items()
        let second = try store.importHomepwner(from: folder)
        #expect(second.changes.isEmpty)
        #expect(second.changes.imagesWritten == 0)
        #expect(second.unchanged.count == 3)
        #expect(try store.lastSeq == seq)
        #expect(try store.items() == before)
    }

    @Test func aChangedItemBecomesOneLocalEdit() throws {
        let dir = TempDirectory()
        let clock = TestClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        let folder = fixtures.folder(dir, file: "items.plist", fixtures.lootLoggerPlist())
        _ = try store.importHomepwner(from: folder)
        let before = try #require(try store.item(fixtures.keys[1]))
        clock.set(1_800_000_000_000)
        var changed = fixtures.items
        changed[1].name = "Shinier Mac"
        try Data(fixtures.lootLoggerPlist(changed)).write(to: folder.appendingPathComponent("items.plist"))
        try Data(Fixtures.png(33)).write(to: folder.appendingPathComponent(fixtures.keys[2].rawValue))
        let report = try store.importHomepwner(from: folder)
        #expect(Set(report.changes.updated) == [fixtures.keys[1], fixtures.keys[2]])
        #expect(report.changes.inserted.isEmpty)
        #expect(report.changes.imagesWritten == 1)
        let after = try #require(try store.item(fixtures.keys[1]))
        #expect(after.name == "Shinier Mac")
        #expect(after.version > before.version)
        #expect(after.version.origin == store.nodeID)
        #expect(try store.item(fixtures.keys[2])?.image == Fixtures.ref(Fixtures.png(33)))
        // A later import without the image file keeps the store's image.
        try FileManager.default.removeItem(at: folder.appendingPathComponent(fixtures.keys[2].rawValue))
        #expect(try store.importHomepwner(from: folder).changes.isEmpty)
        #expect(try store.item(fixtures.keys[2])?.image == Fixtures.ref(Fixtures.png(33)))
    }

    @Test func dryRunWritesNothing() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let folder = fixtures.folder(
            dir, file: "items.archive", fixtures.swiftArchive(), images: [fixtures.keys[0]: jpeg()])
        let report = try store.importHomepwner(from: folder, options: .init(dryRun: true))
        #expect(report.changes.inserted.count == 3)
        #expect(report.changes.imagesWritten == 1)
        #expect(try store.lastSeq == 0)
        #expect(Fixtures.imageFiles(store).isEmpty)
    }

    @Test func itemsDeletedHereStayDeleted() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.swiftArchive())
        _ = try store.importHomepwner(from: folder)
        _ = try store.delete([fixtures.keys[0]])
        let report = try store.importHomepwner(from: folder)
        #expect(report.skippedDeleted == [fixtures.keys[0]])
        #expect(report.changes.isEmpty)
        #expect(try store.item(fixtures.keys[0])?.deleted == true)
    }

    /// Without the tombstone row the key looked new: the import made a fresh local edit that
    /// beat the GC horizon and would have revived the item on every peer.
    @Test func itemsDeletedHereStayDeletedAfterGCDroppedTheTombstone() throws {
        let dir = TempDirectory()
        let clock = TestClock()
        let store = try Fixtures.makeStore(dir, clock: clock)
        let folder = fixtures.folder(
            dir, file: "items.archive", fixtures.swiftArchive(), images: [fixtures.keys[0]: jpeg()])
        _ = try store.importHomepwner(from: folder)
        _ = try store.delete([fixtures.keys[0]])
        clock.set(clock.nowMilliseconds() + 200 * 86_400_000)
        #expect(try store.collectGarbage(before: VersionStamp(milliseconds: clock.nowMilliseconds())).dropped == 1)
        #expect(try store.item(fixtures.keys[0]) == nil, "the tombstone row is gone")
        let seq = try store.lastSeq

        let preview = try store.importHomepwner(from: folder, options: .init(dryRun: true))
        #expect(preview.skippedDeleted == [fixtures.keys[0]])
        #expect(preview.changes.isEmpty)
        let reopened = try Fixtures.reopen(store, clock: clock)
        let report = try reopened.importHomepwner(from: folder)
        #expect(report.skippedDeleted == [fixtures.keys[0]])
        #expect(report.unchanged.count == 2)
        #expect(report.changes.isEmpty)
        #expect(try reopened.item(fixtures.keys[0]) == nil, "no fresh edit beats the horizon")
        #expect(try reopened.lastSeq == seq)
        #expect(Fixtures.imageFiles(reopened).isEmpty)
    }

    @Test func largeImportsApplyInBatches() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        var generator = SplitMix64(seed: 7)
        let items = (0..<2500).map { index in
            HomepwnerItem(
                key: ItemKey.random(using: &generator), name: "Item \(index)", valueInDollars: Int64(index),
                dateCreatedMilliseconds: 1_500_000_000_000 + Int64(index))
        }
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.swiftArchive(items))
        var options = HomepwnerImportOptions()
        options.batchSize = 1000
        let report = try store.importHomepwner(from: folder, options: options)
        #expect(report.changes.inserted.count == 2500)
        #expect(try store.lastSeq == 2500)
        #expect(try store.importHomepwner(from: folder).unchanged.count == 2500)
    }
}
