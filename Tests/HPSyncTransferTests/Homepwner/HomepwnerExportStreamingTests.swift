import Foundation
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore
@testable import HPSyncTransfer

/// `export-homepwner` writes its data file object by object through small buffers (#18): what
/// it writes must read back as the inventory it came from, in every format.
@Suite("Homepwner export, streamed")
struct HomepwnerExportStreamingTests {
    let fixtures = HomepwnerFixtures.self

    /// 2,500 items: names with and without non-ASCII text, serials absent, empty and present,
    /// values negative and large (within 32 bits), dates before 1970, a few images.
    func populatedStore(_ dir: TempDirectory) throws -> Store {
        var items = HomepwnerStreamingTests.items(2500, seed: 23)
        for index in stride(from: 0, to: items.count, by: 11) { items[index].serialNumber = "" }
        items[5].valueInDollars = Int64(Int32.max)
        items[6].valueInDollars = Int64(Int32.min)
        items[7].dateCreatedMilliseconds = -86_400_001
        let images = Dictionary(uniqueKeysWithValues: (0..<5).map { (items[$0 * 400].key, jpeg(UInt8($0), size: 900)) })
        let store = try Fixtures.makeStore(dir)
        let folder = fixtures.folder(dir, file: "items.plist", fixtures.lootLoggerPlist(items), images: images)
        #expect(try store.importHomepwner(from: folder).changes.inserted.count == 2500)
        return store
    }

    @Test(arguments: [HomepwnerExportFormat.archive(.swift), .archive(.objectiveC), .plist])
    func aStreamedExportImportsAsTheSameInventory(format: HomepwnerExportFormat) throws {
        let dir = TempDirectory()
        let source = try populatedStore(dir)
        let exported = dir.url.appendingPathComponent("exported")
        // 104 bytes per write and read back: the file and its side lists span many.
        let report = try source.exportHomepwner(to: exported, format: format, bufferBytes: 104)
        #expect(report.items == 2500)
        #expect(report.images == 5)
        let names = try FileManager.default.contentsOfDirectory(atPath: exported.path)
        #expect(names.filter { $0.hasPrefix(".hp-sync-export-") }.isEmpty, "\(names)")
        #expect(names.count == 6)
        let copyDir = TempDirectory()
        let copy = try Fixtures.makeStore(copyDir, node: Fixtures.nodeB)
        let imported = try copy.importHomepwner(from: exported)
        #expect(imported.changes.inserted.count == 2500)
        let roundTrip = HomepwnerRoundTripTests()
        #expect(try roundTrip.content(copy) == roundTrip.content(source))
        // The file is the one a whole-file encoder reads too (Foundation for the plist).
        if format == .plist {
            let data = try Data(contentsOf: exported.appendingPathComponent("items.plist"))
            #expect(try LootLoggerPlist.decode(data, file: "items.plist").count == 2500)
        } else {
            let data = try Data(contentsOf: exported.appendingPathComponent("items.archive"))
            #expect(try HomepwnerArchive.decode(data, file: "items.archive").1.count == 2500)
        }
    }

    /// A refused export writes nothing: no data file, no temporary, no image.
    @Test func aRefusedExportLeavesTheFolderAsItWas() throws {
        let dir = TempDirectory()
        let store = try populatedStore(dir)
        // Out of today's range: a row from before it, written straight into the database.
        let yacht = try store.add(ItemDraft(name: "Yacht"))
        try ExtremeRecords.overwrite(
            yacht.key, with: ExtremeFields(name: "Yacht", serial: nil, value: 3_000_000_000, date: 0),
            inStore: store.directory)
        let out = dir.url.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        #expect(throws: HomepwnerError.self) { try store.exportHomepwner(to: out, format: .archive(.objectiveC)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
    }

    /// Re-importing an unchanged folder writes nothing: no row, no stamp, no seq, so the WAL
    /// keeps its bytes. (SQLite skips rewriting identical rows, so this passed before batches
    /// without changes rolled back too; it fails when a re-import commits an advanced clock.)
    @Test func reimportingUnchangedItemsCommitsNothing() throws {
        let dir = TempDirectory()
        let store = try populatedStore(dir)
        let folder = dir.url.appendingPathComponent("again")
        _ = try store.exportHomepwner(to: folder, format: .plist)
        let wal = store.directory.appendingPathComponent("store.sqlite-wal")
        let before = try Data(contentsOf: wal)
        #expect(try store.importHomepwner(from: folder).unchanged.count == 2500)
        #expect(try Data(contentsOf: wal) == before)
    }

    /// Each batch commits on its own: an import stopped in its third batch keeps the first two
    /// and a valid store, and running it again finishes the job.
    @Test func anInterruptedImportIsFinishedByRunningItAgain() throws {
        let dir = TempDirectory()
        let items = HomepwnerStreamingTests.items(2500, seed: 29)
        let changing = items[2200].key
        let folderURL = fixtures.folder(
            dir, file: "items.plist", fixtures.lootLoggerPlist(items), images: [changing: jpeg(3, size: 700)])
        let folder = try HomepwnerFolder.load(folderURL)
        // The image changes after the folder was checked: its batch (items 2000-2499) stops.
        try Data(jpeg(4, size: 700)).write(to: folderURL.appendingPathComponent(changing.rawValue))
        let store = try Fixtures.makeStore(dir)
        var options = HomepwnerImportOptions()
        options.batchSize = 1000
        #expect(throws: HomepwnerError.self) { try store.importHomepwner(folder, options: options) }
        #expect(try store.items().count == 2000)
        #expect(try store.lastSeq == 2000)
        #expect(Fixtures.imageFiles(store).isEmpty)
        let again = try store.importHomepwner(from: folderURL, options: options)
        #expect(again.changes.inserted.count == 500)
        #expect(again.unchanged.count == 2000)
        #expect(try store.item(changing)?.image == Fixtures.ref(jpeg(4, size: 700)))
        #expect(try store.items().count == 2500)
    }
}
