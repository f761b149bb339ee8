import Foundation
import HPSyncModel
import HPSyncStore

/// Importing a Homepwner Documents folder as local changes, and writing one back.
extension Store {
    /// How many items each import transaction applies.
    static let homepwnerBatchSize = 1000

    /// Reads, checks and imports the Homepwner folder at `url`. Nothing is written unless the
    /// whole folder is valid; unchanged items are left alone, so re-importing changes nothing.
    public func importHomepwner(from url: URL, options: HomepwnerImportOptions = .init()) throws
        -> HomepwnerImportReport
    {
        let folder = try HomepwnerFolder.load(url, maxImageBytes: maxImageBytes)
        return try importHomepwner(folder, options: options)
    }

    /// Imports an already loaded folder; see `importHomepwner(from:options:)`.
    public func importHomepwner(_ folder: HomepwnerFolder, options: HomepwnerImportOptions = .init()) throws
        -> HomepwnerImportReport
    {
        // Everything the store will hold is settled and checked before the first write.
        var wanted: [Item] = []
        var labels = 0
        for item in folder.items {
            var name = item.name
            if let label = item.assetType, !label.isEmpty {
                labels += 1
                if options.assetType == .name { name += " [\(label)]" }
            }
            do {
                try Self.validate(name: name, serial: item.serialNumber, requireName: false)
            } catch {
                throw HomepwnerError.malformed(file: folder.url.path, reason: "item \(item.key): \(error)")
            }
            wanted.append(
                Item(
                    key: item.key, name: name, serialNumber: item.serialNumber, valueInDollars: item.valueInDollars,
                    dateCreatedMilliseconds: item.dateCreatedMilliseconds, image: folder.images[item.key]?.ref,
                    version: Version(stamp: .zero, origin: nodeID)))
        }
        var report = HomepwnerImportReport(
            sources: folder.sources, changes: ChangeSet(), unchanged: [], skippedDeleted: [],
            keysWithoutImage: folder.keysWithoutImage, assetTypeLabels: labels, assetType: options.assetType,
            dryRun: options.dryRun)
        let imageFiles = folder.images.mapValues(\.url)
        var start = 0
        while start < wanted.count {
            let batch = Array(wanted[start..<min(start + Self.homepwnerBatchSize, wanted.count)])
            start += Self.homepwnerBatchSize
            let outcome: LocalEditsOutcome
            do {
                outcome = try importLocalEdits(batch, imageFiles: imageFiles, dryRun: options.dryRun)
            } catch LocalEditError.imageFileChanged(let url) {
                throw HomepwnerError.malformed(file: url.path, reason: "changed while being imported; import again")
            }
            report.changes.formUnion(outcome.changes)
            report.unchanged += outcome.unchanged
            report.skippedDeleted += outcome.skippedDeleted
        }
        return report
    }
}
