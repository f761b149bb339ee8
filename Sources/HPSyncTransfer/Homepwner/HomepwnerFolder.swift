import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore

/// A Homepwner Documents folder, read and checked in full before anything is written: every
/// data file any edition left there, the items they hold and the image file of each item.
///
/// The items are not held: `forEachItem` decodes them again, one at a time (an `items.plist`
/// from a memory map), so a folder of 1,000,000 items costs a few bytes per key, not a tree of
/// values per item.
public struct HomepwnerFolder: Sendable {
    /// One data file found in the folder.
    public struct Source: Sendable, Equatable {
        public var file: String
        public var edition: HomepwnerEdition
        public var itemCount: Int
    }

    /// An item's image file, already checked (magic bytes, size limit) and hashed.
    public struct Image: Sendable, Equatable {
        public var url: URL
        public var ref: ImageRef
    }

    /// The data file names, in the order the editions appeared.
    public static let archiveName = "items.archive"
    public static let plistName = "items.plist"
    public static let coreDataNames = ["store.data", "items.data"]

    public let url: URL
    public private(set) var sources: [Source] = []
    public private(set) var images: [ItemKey: Image] = [:]
    /// Items without an image file (fine: the app only writes one when a photo was taken).
    public private(set) var keysWithoutImage = ItemKeyList()
    /// How many items carry a Core Data asset type label.
    public private(set) var assetTypeLabels = 0
    /// How to read each source's items again, in `sources` order.
    private var contents: [Contents] = []
    /// The positions (counted over all sources) of items that repeat an earlier one.
    private var repeats: Set<Int> = []

    /// A source's items: decoded again from the file, or (an archive, a Core Data store, a
    /// plist the lazy reader did not vouch for) as decoded whole.
    private enum Contents: Sendable {
        case lazyPlist(URL)
        case lazyArchive(URL)
        case decoded([HomepwnerItem])
    }

    /// Reads and validates the folder; throws naming the first file at fault.
    public static func load(_ url: URL, maxImageBytes: Int64 = ItemLimits.defaultMaxImageBytes) throws(HomepwnerError)
        -> HomepwnerFolder
    {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .missingFolder(path: url.path)
        }
        var folder = HomepwnerFolder(url: url)
        // Every file decodes before any item is checked, as when they were decoded whole.
        for name in [archiveName, plistName] + coreDataNames {
            let file = url.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: file.path) else { continue }
            switch name {
            case archiveName:
                if let (edition, count) = HomepwnerArchive.count(file) {
                    folder.add(Source(file: name, edition: edition, itemCount: count), .lazyArchive(file))
                } else {
                    let (edition, items) = try HomepwnerArchive.decode(try read(file), file: file.path)
                    folder.add(Source(file: name, edition: edition, itemCount: items.count), .decoded(items))
                }
            case plistName:
                if let count = LootLoggerPlist.count(file) {
                    folder.add(Source(file: name, edition: .lootLogger, itemCount: count), .lazyPlist(file))
                } else {
                    let items = try LootLoggerPlist.decode(try read(file), file: file.path)
                    folder.add(Source(file: name, edition: .lootLogger, itemCount: items.count), .decoded(items))
                }
            default:
                let items = try CoreDataInventory.decode(file, file: file.path)
                folder.add(Source(file: name, edition: .coreData, itemCount: items.count), .decoded(items))
            }
        }
        guard !folder.sources.isEmpty else { throw .nothingToImport(path: url.path) }
        // Names present, lowercased: a key with no file of its name needs no look-up of its own.
        let names = Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).map { $0.lowercased() })
        var seen = FirstSeenKeys(count: folder.sources.reduce(0) { $0 + $1.itemCount })
        var withFile: [HomepwnerItem] = []
        var withoutFile = ItemKeyList()
        var repeats: Set<Int> = []
        var labels = 0
        var position = 0
        for (index, source) in folder.sources.enumerated() {
            let path = url.appendingPathComponent(source.file).path
            let sources = folder.sources
            try folder.forEach(
                index,
                checking: { (item) throws(HomepwnerError) in
                    defer { position += 1 }
                    try check(item, file: path)
                    if let earlier = seen.insert(KeyBits(item.key), source: index, content: contentHash(item)) {
                        guard earlier.sameContent else {
                            throw .conflict(
                                key: item.key.rawValue,
                                reason: "\(sources[earlier.source].file) and \(source.file) give it different "
                                    + "contents; keep one of the files")
                        }
                        repeats.insert(position)
                        return
                    }
                    if item.assetType.map({ !$0.isEmpty }) == true { labels += 1 }
                    if [item.keyText, item.key.rawValue].contains(where: { names.contains($0.lowercased()) }) {
                        withFile.append(item)
                    } else {
                        withoutFile.append(item.key)
                    }
                })
        }
        seen = FirstSeenKeys(count: 0)
        for item in withFile {
            if let image = try image(for: item, in: url, maxBytes: maxImageBytes) {
                folder.images[item.key] = image
            } else {
                withoutFile.append(item.key)
            }
        }
        folder.keysWithoutImage = withoutFile
        folder.repeats = repeats
        folder.assetTypeLabels = labels
        return folder
    }

    /// Calls `body` with each item of the folder in file order, each key once.
    public func forEachItem(_ body: (HomepwnerItem) throws -> Void) throws {
        var position = 0
        for index in sources.indices {
            try forEach(index) { item in
                defer { position += 1 }
                if !repeats.contains(position) { try body(item) }
            }
        }
    }

    private mutating func add(_ source: Source, _ items: Contents) {
        sources.append(source)
        contents.append(items)
    }

    /// Each item of source `index`, repeats included.
    private func forEach(_ index: Int, _ body: (HomepwnerItem) throws -> Void) throws {
        switch contents[index] {
        case .decoded(let items):
            for item in items { try body(item) }
        case .lazyPlist(let file):
            try LootLoggerPlist.forEachItem(file, file: file.path, body)
        case .lazyArchive(let file):
            try HomepwnerArchive.forEachItem(file, file: file.path, body)
        }
    }

    /// `forEach` for `load`, whose checks throw only `HomepwnerError`s.
    private func forEach(_ index: Int, checking body: (HomepwnerItem) throws(HomepwnerError) -> Void)
        throws(HomepwnerError)
    {
        do {
            try forEach(index) { (item: HomepwnerItem) in try body(item) }
        } catch let error as HomepwnerError {
            throw error
        } catch {
            throw .malformed(file: url.appendingPathComponent(sources[index].file).path, reason: "\(error)")
        }
    }

    /// An item's contents (name, serial, value, date), hashed: two items of one key in the
    /// folder must agree on them.
    private static func contentHash(_ item: HomepwnerItem) -> Int {
        var hasher = Hasher()
        hasher.combine(item.name)
        hasher.combine(item.serialNumber)
        hasher.combine(item.valueInDollars)
        hasher.combine(item.dateCreatedMilliseconds)
        return hasher.finalize()
    }

    private init(url: URL) { self.url = url }

    private static func read(_ file: URL) throws(HomepwnerError) -> Data {
        do {
            return try Data(contentsOf: file)
        } catch {
            throw .malformed(file: file.path, reason: "cannot be read: \(error.localizedDescription)")
        }
    }

    /// The store's limits on names, serials and values, checked before anything is written.
    private static func check(_ item: HomepwnerItem, file: String) throws(HomepwnerError) {
        do {
            try Store.validate(
                name: item.name, serial: item.serialNumber, value: item.valueInDollars, requireName: false)
        } catch {
            throw .malformed(file: file, reason: "item \(item.key): \(error)")
        }
    }

    /// The checked image file named by the item's key, or nil when there is none.
    private static func image(for item: HomepwnerItem, in folder: URL, maxBytes: Int64) throws(HomepwnerError)
        -> Image?
    {
        let candidates = [item.keyText, item.key.rawValue, item.key.rawValue.lowercased()]
        guard let file = candidates.map({ folder.appendingPathComponent($0) }).first(where: { exists($0) }) else {
            return nil
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        guard attributes?[.type] as? FileAttributeType == .typeRegular else {
            throw .malformed(file: file.path, reason: "the image of item \(item.key) is not a regular file")
        }
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        guard size <= maxBytes else {
            throw .malformed(
                file: file.path, reason: "the image of item \(item.key) is \(size) bytes, over the limit of \(maxBytes)"
            )
        }
        // Checked and hashed in chunks: an image is never held in memory whole.
        let header: [UInt8]
        let ref: ImageRef
        do {
            (header, ref) = try ImageFormat.inspect(file.path)
        } catch {
            throw .malformed(file: file.path, reason: "cannot be read: \(error)")
        }
        guard ImageFormat.isImage(header) else {
            throw .malformed(
                file: file.path, reason: "named by the key of item \(item.key) but not a JPEG, PNG, GIF or HEIC image")
        }
        return Image(url: file, ref: ref)
    }

    private static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }
}
