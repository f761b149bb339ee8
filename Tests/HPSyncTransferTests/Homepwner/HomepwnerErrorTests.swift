import Foundation
import HPSyncTesting
import Testing

@testable import HPSyncStore
@testable import HPSyncTransfer

/// Every bad folder is refused with the file and the fault named, and nothing is imported.
@Suite("Homepwner import: malformed folders import nothing")
struct HomepwnerErrorTests {
    let fixtures = HomepwnerFixtures.self

    /// Imports `folder` into a fresh store, expects a `.malformed` error naming `file`, and
    /// checks that the store is untouched.
    func expectRefused(
        _ folder: URL, file: String, mentioning words: [String], dir: TempDirectory,
        configuration: StoreConfiguration = Fixtures.configuration
    ) throws {
        let storeDir = TempDirectory()
        let store = try Fixtures.makeStore(storeDir, configuration: configuration)
        do {
            _ = try store.importHomepwner(from: folder)
            Issue.record("import of a bad \(file) succeeded")
        } catch let error as HomepwnerError {
            guard case .malformed(let path, let reason) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(path.hasSuffix(file), "\(error)")
            for word in words { #expect(reason.contains(word), "\(reason)") }
            #expect(error.description.hasSuffix("nothing was imported"))
        }
        #expect(try store.items(includeDeleted: true).isEmpty)
        #expect(try store.lastSeq == 0)
        #expect(Fixtures.imageFiles(store).isEmpty)
    }

    @Test(arguments: [0, 8, 100, 300])
    func truncatedArchive(keeping count: Int) throws {
        let dir = TempDirectory()
        let bytes = fixtures.swiftArchive()
        let folder = fixtures.folder(dir, file: "items.archive", Array(bytes.prefix(min(count, bytes.count - 1))))
        try expectRefused(folder, file: "items.archive", mentioning: [], dir: dir)
    }

    @Test func truncatedAtEveryLengthNeverImportsOrCrashes() throws {
        let bytes = HomepwnerFixtures.objectiveCArchive()
        for count in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: HomepwnerError.self) {
                try HomepwnerArchive.decode(Data(bytes.prefix(count)), file: "items.archive")
            }
        }
    }

    @Test func corruptedBytesNeverCrash() throws {
        let bytes = HomepwnerFixtures.objectiveCArchive()
        var generator = SplitMix64(seed: 42)
        for _ in 0..<300 {
            var copy = bytes
            for _ in 0..<3 {
                copy[Int.random(in: 8..<copy.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            // Either a clean error or (if the flip hit a name's letter) items; never a trap.
            _ = try? HomepwnerArchive.decode(Data(copy), file: "items.archive")
        }
    }

    /// The lazy readers (a memory map, one item at a time: what `import-homepwner` uses first)
    /// on corrupted archives and LootLogger plists: a clean refusal or items, never a trap.
    /// The whole-file path above never reached them, and one trapped on a crafted UID.
    @Test func corruptedBytesNeverCrashTheLazyReaders() throws {
        let dir = TempDirectory()
        var generator = SplitMix64(seed: 7)
        let sources: [(file: String, bytes: [UInt8])] = [
            ("items.archive", HomepwnerFixtures.objectiveCArchive()),
            ("items.archive", HomepwnerFixtures.swiftArchive()),
            ("items.plist", HomepwnerFixtures.lootLoggerPlist()),
        ]
        var read = 0
        for (index, source) in sources.enumerated() {
            for round in 0..<1_500 {
                var copy = source.bytes
                // Random bytes anywhere; bytes set to 0xFF or 0x00 (the widest and narrowest values
                // a length, UID or offset byte can take); and markers of UIDs of every width
                // (0x80-0x8F), so that a UID's bytes run into whatever follows.
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let at = Int.random(in: 8..<copy.count, using: &generator)
                    copy[at] =
                        [
                            UInt8.random(in: 0...255, using: &generator), 0xFF, 0x00,
                            0x80 | UInt8.random(in: 0...15, using: &generator),
                        ][round % 4]
                }
                let url = dir.file("\(index)-\(round)-\(source.file)", copy)
                if source.file == "items.plist" {
                    guard LootLoggerPlist.count(url) != nil else { continue }
                    try? LootLoggerPlist.forEachItem(url, file: source.file) { _ in read += 1 }
                } else {
                    guard HomepwnerArchive.count(url) != nil else { continue }
                    try? HomepwnerArchive.forEachItem(url, file: source.file) { _ in read += 1 }
                }
            }
        }
        #expect(read > 0, "some corruptions leave readable items (a flipped letter of a name)")
    }

    @Test func wrongArchiver() throws {
        let dir = TempDirectory()
        var builder = KeyedArchiveBuilder()
        let root = builder.array { _ in [] }
        let plist = PlistValue.dictionary([
            ("$version", .integer(100_000)), ("$archiver", .string("NSArchiver")),
            ("$top", .dictionary([("root", root)])), ("$objects", .array(builder.objects)),
        ])
        let folder = fixtures.folder(dir, file: "items.archive", BinaryPlistWriter.encode(plist))
        try expectRefused(folder, file: "items.archive", mentioning: ["$archiver", "NSArchiver"], dir: dir)
    }

    /// The Swift archive with one reference replaced: `item`'s field `key` now points at `uid`.
    func archive(pointing key: String, ofItem item: Int = 0, at uid: Int) throws -> [UInt8] {
        var parsed = try PlistValue.parse(Data(fixtures.swiftArchive()))
        guard case .dictionary(var top) = parsed, let index = top.firstIndex(where: { $0.0 == "$objects" }),
            case .array(var objects) = top[index].1, case .uid(let rootUID)? = parsed["$top"]?["root"],
            case .array(let members)? = objects[rootUID]["NS.objects"], case .uid(let itemUID) = members[item],
            case .dictionary(var fields) = objects[itemUID], let field = fields.firstIndex(where: { $0.0 == key })
        else { throw CancellationError() }
        fields[field].1 = .uid(uid)
        objects[itemUID] = .dictionary(fields)
        top[index].1 = .array(objects)
        parsed = .dictionary(top)
        return BinaryPlistWriter.encode(parsed)
    }

    @Test func uidOutOfRange() throws {
        let dir = TempDirectory()
        let folder = fixtures.folder(dir, file: "items.archive", try archive(pointing: "name", at: 9999))
        try expectRefused(folder, file: "items.archive", mentioning: ["CF$UID 9999", "outside $objects"], dir: dir)
    }

    /// A UID past Int's range (an 8-byte UID with its top bit set) is refused; the lazy reader
    /// trapped on it before (`Int(UInt64)`), taking `import-homepwner` down on a crafted file.
    @Test func aUIDBeyondIntsRangeIsRefused() throws {
        let dir = TempDirectory()
        var bytes = try archive(pointing: "name", at: Int.max)
        let written: [UInt8] = [0x87, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        let at = try #require(
            bytes.indices.first { bytes[$0...].starts(with: written) }, "the writer's 8-byte UID")
        bytes[at + 1] = 0xFF
        let folder = fixtures.folder(dir, file: "items.archive", bytes)
        // The lazy reader refuses it; the whole-file reader then words the fault (Foundation
        // refuses it too).
        try expectRefused(folder, file: "items.archive", mentioning: [], dir: dir)
    }

    @Test func referenceCycle() throws {
        let dir = TempDirectory()
        // The item's dateCreated points at the root array, whose members include the item.
        let folder = fixtures.folder(dir, file: "items.archive", try archive(pointing: "dateCreated", at: 1))
        try expectRefused(folder, file: "items.archive", mentioning: ["cycle"], dir: dir)
        let selfReference = fixtures.folder(dir, file: "items.archive", try archive(pointing: "name", at: 2))
        try expectRefused(selfReference, file: "items.archive", mentioning: ["cycle"], dir: dir)
    }

    @Test func malformedKey() throws {
        let dir = TempDirectory()
        var items = fixtures.items
        items[1].keyText = "../../etc/passwd"
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.objectiveCArchive(items))
        try expectRefused(folder, file: "items.archive", mentioning: ["item 1", "malformed itemKey"], dir: dir)
        let plistItems = try PropertyListSerialization.data(
            fromPropertyList: [["name": "x", "valueInDollars": 1, "dateCreated": Date(), "itemKey": "nope"]],
            format: .binary, options: 0)
        let plist = fixtures.folder(dir, file: "items.plist", Array(plistItems))
        try expectRefused(plist, file: "items.plist", mentioning: ["malformed itemKey"], dir: dir)
    }

    @Test func nonImageUnderAKeyName() throws {
        let dir = TempDirectory()
        let key = fixtures.keys[2]
        let folder = fixtures.folder(
            dir, file: "items.archive", fixtures.swiftArchive(),
            images: [fixtures.keys[0]: jpeg(), key: Array("not a photo".utf8)])
        try expectRefused(folder, file: key.rawValue, mentioning: ["not a JPEG"], dir: dir)
    }

    /// Only a regular file counts as an item's image: not a directory, nor a symbolic link (to an
    /// image or anywhere else) that would make the import read outside the folder.
    @Test func anImageThatIsNotARegularFile() throws {
        let dir = TempDirectory()
        let key = fixtures.keys[1]
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.swiftArchive())
        let named = folder.appendingPathComponent(key.rawValue)
        try FileManager.default.createDirectory(at: named, withIntermediateDirectories: false)
        try expectRefused(folder, file: key.rawValue, mentioning: ["not a regular file"], dir: dir)
        try FileManager.default.removeItem(at: named)
        try FileManager.default.createSymbolicLink(at: named, withDestinationURL: dir.file("real.jpg", jpeg()))
        try expectRefused(folder, file: key.rawValue, mentioning: ["not a regular file"], dir: dir)
    }

    @Test func anImageOverTheSizeLimit() throws {
        let dir = TempDirectory()
        let key = fixtures.keys[0]
        let image = jpeg(size: 100)
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.swiftArchive(), images: [key: image])
        try expectRefused(
            folder, file: key.rawValue, mentioning: ["\(image.count) bytes", "over the limit of 99"], dir: dir,
            configuration: StoreConfiguration(maxImageBytes: 99, sweepAgeSeconds: 0))
        // At the limit exactly it is accepted.
        let storeDir = TempDirectory()
        let store = try Fixtures.makeStore(
            storeDir, configuration: StoreConfiguration(maxImageBytes: Int64(image.count), sweepAgeSeconds: 0))
        #expect(try store.importHomepwner(from: folder).changes.imagesWritten == 1)
    }

    @Test func truncatedAndCorruptedPlist() throws {
        let dir = TempDirectory()
        let bytes = fixtures.lootLoggerPlist()
        let truncated = fixtures.folder(dir, file: "items.plist", Array(bytes.prefix(bytes.count / 2)))
        try expectRefused(truncated, file: "items.plist", mentioning: [], dir: dir)
        let wrongShape = try PropertyListSerialization.data(fromPropertyList: ["items": 1], format: .binary, options: 0)
        let folder = fixtures.folder(dir, file: "items.plist", Array(wrongShape))
        try expectRefused(folder, file: "items.plist", mentioning: ["not a LootLogger item list"], dir: dir)
    }

    @Test func corruptedCoreDataStore() throws {
        let dir = TempDirectory()
        let garbage = fixtures.folder(
            dir, file: "store.data", Array("SQLite format 3\0 but not really".utf8) + [UInt8](repeating: 7, count: 2000)
        )
        try expectRefused(garbage, file: "store.data", mentioning: ["SQLite"], dir: dir)
        let empty = dir.url.appendingPathComponent("empty-cd")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try GRDBTestSupport.emptyDatabase(at: empty.appendingPathComponent("items.data"))
        try expectRefused(empty, file: "items.data", mentioning: ["ZBNRITEM"], dir: dir)
    }

    @Test func missingAndEmptyFolders() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        let missing = dir.url.appendingPathComponent("nope")
        #expect(throws: HomepwnerError.missingFolder(path: missing.path)) { try store.importHomepwner(from: missing) }
        #expect(throws: HomepwnerError.nothingToImport(path: dir.url.path)) { try store.importHomepwner(from: dir.url) }
    }

    @Test func conflictingFilesImportNothing() throws {
        let dir = TempDirectory()
        let store = try Fixtures.makeStore(dir)
        var changed = fixtures.items
        changed[2].valueInDollars = 5
        let folder = fixtures.folder(dir, file: "items.archive", fixtures.swiftArchive())
        try Data(fixtures.lootLoggerPlist(changed)).write(to: folder.appendingPathComponent("items.plist"))
        #expect(throws: HomepwnerError.self) { try store.importHomepwner(from: folder) }
        #expect(try store.lastSeq == 0)
    }
}
