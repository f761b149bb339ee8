import Foundation
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
    public func exportHomepwner(to directory: URL, format: HomepwnerExportFormat) throws -> HomepwnerExportReport {
        let items = try items().sorted {
            ($0.dateCreatedMilliseconds, $0.key) < ($1.dateCreatedMilliseconds, $1.key)
        }
        let appItems = items.map {
            HomepwnerItem(
                key: $0.key, name: $0.name, serialNumber: $0.serialNumber, valueInDollars: $0.valueInDollars,
                dateCreatedMilliseconds: $0.dateCreatedMilliseconds)
        }
        let bytes: [UInt8]
        switch format {
        case .archive(let style): bytes = try HomepwnerArchive.encode(appItems, style: style)
        case .plist: bytes = try LootLoggerPlist.encode(appItems)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw HomepwnerError.cannotWrite(path: directory.path, reason: error.localizedDescription)
        }
        var report = HomepwnerExportReport(
            file: directory.appendingPathComponent(format.fileName), items: items.count, images: 0, imageBytes: 0)
        for item in items {
            guard let image = item.image else { continue }
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
        // The data file last, so a folder with a data file has all its images.
        do {
            try Data(bytes).write(to: report.file, options: .atomic)
        } catch {
            throw HomepwnerError.cannotWrite(path: report.file.path, reason: error.localizedDescription)
        }
        return report
    }
}
