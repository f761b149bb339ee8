import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore

/// A Homepwner Documents folder, read and checked in full before anything is written: every
/// data file any edition left there, the items they hold and the image file of each item.
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
    /// The items of all files, each key once, in file order.
    public private(set) var items: [HomepwnerItem] = []
    public private(set) var images: [ItemKey: Image] = [:]
    /// Items without an image file (fine: the app only writes one when a photo was taken).
    public private(set) var keysWithoutImage: [ItemKey] = []

    /// Reads and validates the folder; throws naming the first file at fault.
    public static func load(_ url: URL, maxImageBytes: Int64 = ItemLimits.defaultMaxImageBytes) throws(HomepwnerError)
        -> HomepwnerFolder
    {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .missingFolder(path: url.path)
        }
        var folder = HomepwnerFolder(url: url)
        var found: [(String, HomepwnerEdition, [HomepwnerItem])] = []
        for name in [archiveName, plistName] + coreDataNames {
            let file = url.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: file.path) else { continue }
            switch name {
            case archiveName:
                let (edition, items) = try HomepwnerArchive.decode(try read(file), file: file.path)
                found.append((name, edition, items))
            case plistName:
                found.append((name, .lootLogger, try LootLoggerPlist.decode(try read(file), file: file.path)))
            default:
                found.append((name, .coreData, try CoreDataInventory.decode(file, file: file.path)))
            }
        }
        guard !found.isEmpty else { throw .nothingToImport(path: url.path) }
        var seen: [ItemKey: (file: String, item: HomepwnerItem)] = [:]
        for (name, edition, items) in found {
            folder.sources.append(Source(file: name, edition: edition, itemCount: items.count))
            for item in items {
                try check(item, file: url.appendingPathComponent(name).path)
                if let earlier = seen[item.key] {
                    guard Self.sameContent(earlier.item, item) else {
                        throw .conflict(
                            key: item.key.rawValue,
                            reason: "\(earlier.file) and \(name) give it different contents; keep one of the files")
                    }
                    continue
                }
                seen[item.key] = (name, item)
                folder.items.append(item)
            }
        }
        for item in folder.items {
            if let image = try image(for: item, in: url, maxBytes: maxImageBytes) {
                folder.images[item.key] = image
            } else {
                folder.keysWithoutImage.append(item.key)
            }
        }
        return folder
    }

    private init(url: URL) { self.url = url }

    private static func read(_ file: URL) throws(HomepwnerError) -> Data {
        do {
            return try Data(contentsOf: file)
        } catch {
            throw .malformed(file: file.path, reason: "cannot be read: \(error.localizedDescription)")
        }
    }

    private static func sameContent(_ a: HomepwnerItem, _ b: HomepwnerItem) -> Bool {
        a.name == b.name && a.serialNumber == b.serialNumber && a.valueInDollars == b.valueInDollars
            && a.dateCreatedMilliseconds == b.dateCreatedMilliseconds
    }

    /// The store's limits on names and serials, checked before anything is written.
    private static func check(_ item: HomepwnerItem, file: String) throws(HomepwnerError) {
        do {
            try Store.validate(name: item.name, serial: item.serialNumber, requireName: false)
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
