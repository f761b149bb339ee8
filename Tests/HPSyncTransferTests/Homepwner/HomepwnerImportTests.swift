import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncTesting
import Testing

@testable import HPSyncStore
@testable import HPSyncTransfer

@Suite("Homepwner import: every edition")
struct HomepwnerImportTests {
    let fixtures = HomepwnerFixtures.self

    /// The store's view of the fixture items: what every edition must import to.
    func expectInventory(_ store: Store, names: [String]? = nil, images: [ItemKey: [UInt8]] = [:]) throws {
        let stored = Dictionary(uniqueKeysWithValues: try store.items().map { ($0.key, $0) })
        #expect(stored.count == fixtures.items.count)
        for (index, expected) in fixtures.items.enumerated() {
            let item = try #require(stored[expected.key])
            #expect(item.name == (names?[index] ?? expected.name))
            #expect(item.serialNumber == expected.serialNumber)
            #expect(item.valueInDollars == expected.valueInDollars)
            #expect(item.dateCreatedMilliseconds == expected.dateCreatedMilliseconds)
            #expect(item.version.origin == store.nodeID)
            if let bytes = images[expected.key] {
                #expect(item.image == Fixtures.ref(bytes))
                #expect(Fixtures.bytes(store.imageFileURL(for: expected.key)) == bytes)
            } else {
                #expect(item.image == nil)
            }
        }
    }

    @Test func objectiveCArchiveWithThumbnail() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let images = [fixtures.keys[0]: jpeg(1), fixtures.keys[2]: Fixtures.png(4)]
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.objectiveCArchive(), images: images)
        let report = try store.importHomepwner(from: folder)
        #expect(report.sources == [.init(file: "items.archive", edition: .objectiveC, itemCount: 3)])
        #expect(report.changes.inserted.count == 3)
        #expect(report.changes.imagesWritten == 2)
        #expect(report.keysWithoutImage == [fixtures.keys[1]])
        try expectInventory(store, images: images)
    }

    @Test func thirdEditionImageKeyArchive() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.objectiveCArchive(imageKey: true))
        let report = try store.importHomepwner(from: folder)
        #expect(report.sources.first?.edition == .objectiveCImageKey)
        try expectInventory(store)
    }

    @Test func swiftArchive() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let images = [fixtures.keys[1]: jpeg(5)]
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.swiftArchive(), images: images)
        let report = try store.importHomepwner(from: folder)
        #expect(report.sources.first?.edition == .swift)
        try expectInventory(store, images: images)
    }

    @Test func lowercaseKeysFindTheirImages() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        var items = fixtures.items
        items[0].keyText = items[0].key.rawValue.lowercased()
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.objectiveCArchive(items))
        try Data(jpeg(8)).write(to: folder.appendingPathComponent(items[0].keyText))
        _ = try store.importHomepwner(from: folder)
        #expect(try store.item(items[0].key)?.image == Fixtures.ref(jpeg(8)))
    }

    @Test func lootLoggerPlist() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let images = [fixtures.keys[0]: Fixtures.png(6)]
        let folder = fixtures.folder(dir, file: "items.plist", fixtures.lootLoggerPlist(), images: images)
        let report = try store.importHomepwner(from: folder)
        #expect(report.sources.first?.edition == .lootLogger)
        try expectInventory(store, images: images)
    }

    @Test(arguments: ["store.data", "items.data"])
    func coreDataStore(file: String) throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let folder = fixtures.folder(dir, file: "placeholder", [])
        try FileManager.default.removeItem(at: folder.appendingPathComponent("placeholder"))
        try fixtures.writeCoreData(to: folder.appendingPathComponent(file))
        let report = try store.importHomepwner(from: folder)
        #expect(report.sources == [.init(file: file, edition: .coreData, itemCount: 3)])
        #expect(report.assetTypeLabels == 2)
        try expectInventory(store, names: ["Rusty Bear [Toys]", "Shiny Mac ✓", "Old Spork [Kitchen]"])
    }

    @Test func coreDataLabelsCanBeLeftOut() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let folder = fixtures.folder(dir, file: "x", [])
        try fixtures.writeCoreData(to: folder.appendingPathComponent("store.data"))
        let report = try store.importHomepwner(from: folder, options: .init(assetType: .ignore))
        #expect(report.assetTypeLabels == 2)
        try expectInventory(store)
    }

    @Test func archiveAndPlistTogetherAgreeingAreOneInventory() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.swiftArchive())
        try Data(fixtures.lootLoggerPlist()).write(to: folder.appendingPathComponent("items.plist"))
        let report = try store.importHomepwner(from: folder)
        #expect(report.sources.map(\.file) == ["items.archive", "items.plist"])
        #expect(report.changes.inserted.count == 3)
        try expectInventory(store)
    }

    @Test func foundationXMLArchivesDecodeToo() throws {
        // Foundation writes UIDs in XML as {"CF$UID": n}; the decoder takes both forms.
        let binary = Data(fixtures.swiftArchive())
        let object = try PropertyListSerialization.propertyList(from: binary, options: [], format: nil)
        let xml = try PropertyListSerialization.data(fromPropertyList: object, format: .xml, options: 0)
        #expect(String(decoding: xml, as: UTF8.self).contains("CF$UID"))
        let (edition, items) = try HomepwnerArchive.decode(xml, file: "items.archive")
        #expect(edition == .swift)
        #expect(items == fixtures.items)
    }

    @Test func writerEmitsRealUIDs() throws {
        let parsed = try PlistValue.parse(Data(fixtures.swiftArchive()))
        guard case .uid(let root)? = parsed["$top"]?["root"] else {
            Issue.record("$top.root is not a UID: \(String(describing: parsed["$top"]))")
            return
        }
        #expect(root == 1)
        #expect(parsed["$archiver"] == .string("NSKeyedArchiver"))
        #expect(parsed["$version"] == .integer(100_000))
    }

    @Test(arguments: [
        (0.0, Int64(978_307_200_000)), (0.0004, 978_307_200_000), (0.0005, 978_307_200_001),
        (-978_307_200.0, 0), (-978_307_200.001, -1), (734_567_890.123, 1_712_875_090_123),
    ])
    func referenceDatesRoundToTheMillisecond(seconds: Double, milliseconds: Int64) {
        #expect(ReferenceDate.milliseconds(fromReferenceSeconds: seconds) == milliseconds)
        let back = ReferenceDate.referenceSeconds(fromMilliseconds: milliseconds)
        #expect(ReferenceDate.milliseconds(fromReferenceSeconds: back) == milliseconds)
    }

    @Test func impossibleDatesAreRefused() {
        #expect(ReferenceDate.milliseconds(fromReferenceSeconds: .nan) == nil)
        #expect(ReferenceDate.milliseconds(fromReferenceSeconds: .infinity) == nil)
        #expect(ReferenceDate.milliseconds(fromReferenceSeconds: 1e300) == nil)
    }
}
