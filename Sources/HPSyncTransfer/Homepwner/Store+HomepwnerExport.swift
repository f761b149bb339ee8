import Foundation
import HPSyncModel
import HPSyncStore

/// Which file `exportHomepwner` writes.
public enum HomepwnerExportFormat: Sendable, Equatable {
    /// `items.archive`, NSKeyedArchiver, items of the given class.
    case archive(HomepwnerArchive.Style)
    /// `items.plist`, the LootLogger edition's Codable list.
    case plist

    var fileName: String {
        switch self {
        case .archive: return HomepwnerFolder.archiveName
        case .plist: return HomepwnerFolder.plistName
        }
    }
}

/// What `exportHomepwner` wrote.
public struct HomepwnerExportReport: Sendable {
    public var file: URL
    public var items: Int
    public var images: Int
    public var imageBytes: Int64
}

extension Store {
    /// Writes the live items as a Homepwner Documents folder the app reads: the data file, and
    /// each image as `<KEY>` beside it. Items are ordered by creation date (the store keeps no
    /// order of its own). Other files in `directory` are left alone.
    ///
    /// Streamed: items are read from one cursor and written one at a time into
    /// `.hp-sync-export-<UUID>` in `directory`, which replaces the data file once complete (after
    /// the images, so a folder with a data file has all its images). Memory stays the same
    /// whatever the item count.
    public func exportHomepwner(to directory: URL, format: HomepwnerExportFormat) throws -> HomepwnerExportReport {
        try exportHomepwner(to: directory, format: format, bufferBytes: 1 << 20)
    }

    /// `exportHomepwner(to:format:)` with `bufferBytes` (a multiple of 8) per write and read of
    /// its files: tests make it small, so that a small export spans many.
    func exportHomepwner(to directory: URL, format: HomepwnerExportFormat, bufferBytes: Int) throws
        -> HomepwnerExportReport
    {
        if format == .archive(.objectiveC),
            let big = try firstLiveItem(valueOutside: Int64(Int32.min)...Int64(Int32.max))
        {
            try HomepwnerArchive.checkObjectiveCValue(Self.homepwnerItem(big))
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw HomepwnerError.cannotWrite(path: directory.path, reason: error.localizedDescription)
        }
        var report = HomepwnerExportReport(
            file: directory.appendingPathComponent(format.fileName), items: 0, images: 0, imageBytes: 0)
        let files = try HomepwnerExportFiles(directory: directory, bufferBytes: bufferBytes)
        var stream: (any HomepwnerItemStream)?
        let start = { (count: Int) throws in
            switch format {
            case .archive(let style): stream = try KeyedArchiveStream(style: style, count: count, files: files)
            case .plist: stream = try LootLoggerPlistStream(count: count, files: files)
            }
        }
        try forEachLiveItem(order: .date, descending: false, count: start) { item in
            try stream?.add(Self.homepwnerItem(item))
            report.items += 1
            guard let image = item.image else { return }
            let target = directory.appendingPathComponent(item.key.rawValue)
            unlink(target.path)
            do {
                try FileManager.default.copyItem(at: imageFileURL(for: item.key), to: target)
            } catch {
                throw HomepwnerError.cannotWrite(path: target.path, reason: error.localizedDescription)
            }
            report.images += 1
            report.imageBytes += image.size
        }
        try stream?.finish()
        try files.install(as: report.file)
        return report
    }

    private static func homepwnerItem(_ item: Item) -> HomepwnerItem {
        HomepwnerItem(
            key: item.key, name: item.name, serialNumber: item.serialNumber, valueInDollars: item.valueInDollars,
            dateCreatedMilliseconds: item.dateCreatedMilliseconds)
    }
}
