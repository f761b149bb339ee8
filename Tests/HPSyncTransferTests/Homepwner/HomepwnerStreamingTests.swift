import Foundation
import HPSyncModel
import HPSyncStore
import HPSyncTesting
import Testing

@testable import HPSyncTransfer

/// `items.plist` is decoded one item at a time from a memory map (#18): the lazy reader must
/// read every layout Foundation reads, vouch for nothing Foundation refuses, and a fault found
/// late must still leave the store untouched.
@Suite("Homepwner import: items.plist streamed")
struct HomepwnerStreamingTests {
    let fixtures = HomepwnerFixtures.self

    static func items(_ count: Int, seed: UInt64 = 11) -> [HomepwnerItem] {
        var generator = SplitMix64(seed: seed)
        var items: [HomepwnerItem] = []
        for index in 0..<count {
            let name: String = index % 7 == 0 ? "Ding ✓ \(index)" : "Item \(index)"
            let serial: String? = index % 3 == 0 ? "SN-\(index)" : nil
            let value = Int64(index) * 37 - 500
            let date = 1_500_000_000_000 + Int64(index) * 1001
            items.append(
                HomepwnerItem(
                    key: ItemKey.random(using: &generator), name: name, serialNumber: serial, valueInDollars: value,
                    dateCreatedMilliseconds: date))
        }
        return items
    }

    /// The items the lazy reader yields for `bytes`, or nil when it does not vouch for them.
    func lazyItems(_ bytes: [UInt8], dir: TempDirectory) throws -> [HomepwnerItem]? {
        let file = dir.file("items-\(UUID().uuidString).plist", bytes)
        guard LootLoggerPlist.count(file) != nil else { return nil }
        var items: [HomepwnerItem] = []
        try LootLoggerPlist.forEachItem(file, file: file.path) { items.append($0) }
        return items
    }

    /// Foundation writes members before their containers; our writer (and Python's plistlib,
    /// which the bench uses) the other way round, with shared strings: both decode alike.
    @Test func objectsInAnyOrderDecodeAsFoundationDecodesThem() throws {
        let dir = TempDirectory()
        let items = Self.items(300)
        let foundation = fixtures.lootLoggerPlist(items)
        let plist = PlistValue.array(
            items.map { item in
                var fields: [(String, PlistValue)] = [
                    ("itemKey", .string(item.key.rawValue)), ("name", .string(item.name)),
                    ("valueInDollars", .integer(item.valueInDollars)),
                    ("dateCreated", .date(fixtures.seconds(item))), ("extra", .array([.bool(true), .data([1, 2])])),
                ]
                if let serial = item.serialNumber { fields.append(("serialNumber", .string(serial))) }
                return .dictionary(fields)
            })
        let containersFirst = BinaryPlistWriter.encode(plist)
        for bytes in [foundation, containersFirst] {
            let expected = try LootLoggerPlist.decode(Data(bytes), file: "items.plist")
            #expect(try lazyItems(bytes, dir: dir) == expected)
            #expect(expected == items)
        }
    }

    /// Whatever the lazy reader vouches for, Foundation reads the same way: flipped bytes make
    /// it step aside (Foundation then words the fault), never yield other items.
    @Test func corruptedBytesAreNeverVouchedForDifferently() throws {
        let dir = TempDirectory()
        let bytes = fixtures.lootLoggerPlist(Self.items(40))
        var generator = SplitMix64(seed: 5)
        var vouched = 0
        for _ in 0..<300 {
            var copy = bytes
            for _ in 0..<2 {
                copy[Int.random(in: 8..<copy.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            guard let lazy = try lazyItems(copy, dir: dir) else { continue }
            vouched += 1
            #expect(lazy == (try? LootLoggerPlist.decode(Data(copy), file: "items.plist")), "\(copy)")
        }
        #expect(vouched > 0)
    }

    /// A fault in the last of 3,000 items (three write batches' worth) is found before the
    /// first write: the message is the one the whole-file decoder gives, nothing is imported.
    @Test func aFaultDeepInABigPlistImportsNothing() throws {
        let dir = TempDirectory()
        var entries: [[String: Any]] = Self.items(3000).map { item in
            [
                "name": item.name, "valueInDollars": Int(item.valueInDollars), "itemKey": item.key.rawValue,
                "dateCreated": Date(timeIntervalSinceReferenceDate: fixtures.seconds(item)),
            ]
        }
        entries[2999]["itemKey"] = "not-a-key"
        let bytes = try PropertyListSerialization.data(fromPropertyList: entries, format: .binary, options: 0)
        let folder = fixtures.folder(dir, file: "items.plist", Array(bytes))
        let storeDir = TempDirectory()
        let store = try Fixtures.makeStore(storeDir)
        do {
            _ = try store.importHomepwner(from: folder)
            Issue.record("a folder with a malformed key was imported")
        } catch HomepwnerError.malformed(let file, let reason) {
            #expect(file.hasSuffix("items.plist"))
            #expect(reason.contains("item 2999 has a malformed itemKey"), "\(reason)")
        }
        #expect(try store.lastSeq == 0)
        #expect(try store.items(includeDeleted: true).isEmpty)
    }

    /// A key repeated within the file with the same contents is imported once; the report still
    /// lists each key without an image once. (A batch's rows are written, and listed, in key
    /// order.)
    @Test func aRepeatedItemIsImportedOnce() throws {
        let dir = TempDirectory()
        let items = Self.items(2100)
        let folder = fixtures.folder(
            dir, file: "items.plist", fixtures.lootLoggerPlist(items + [items[5]]), images: [items[9].key: jpeg()])
        let storeDir = TempDirectory()
        let store = try Fixtures.makeStore(storeDir)
        let report = try store.importHomepwner(from: folder)
        #expect(report.sources.map(\.itemCount) == [2101])
        #expect(report.changes.inserted == items.map(\.key).sorted { $0.rawValue < $1.rawValue })
        #expect(report.changes.imagesWritten == 1)
        #expect(Array(report.keysWithoutImage) == items.map(\.key).filter { $0 != items[9].key })
        #expect(try store.items().count == 2100)
    }

    @Test func keyListsKeepKeysInOrder() {
        var generator = SplitMix64(seed: 3)
        let keys = (0..<100).map { _ in ItemKey.random(using: &generator) }
        var list = ItemKeyList()
        for key in keys { list.append(key) }
        #expect(Array(list) == keys)
        #expect(list.count == 100)
        #expect(ItemKeyList(arrayLiteral: keys[0], keys[1]) == [keys[0], keys[1]])
    }
}
