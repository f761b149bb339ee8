import Foundation
import HPSyncModel
import HPSyncStore

/// Importing a Homepwner Documents folder as local changes, and writing one back.
extension Store {
    /// How many items each import transaction applies: 100,000 commits (and fsyncs) a
    /// 1,000,000-item folder in 10 transactions, each rewriting the key index's leaves once (in
    /// key order); 10,000 wrote 4.3 GB for it, 1,000 took 52 CPU-s instead of 36. Each batch
    /// commits on its own: an interrupted import leaves whole batches, and running it again
    /// finishes the job (what is already in is unchanged).
    static let homepwnerBatchSize = 100_000

    /// Reads, checks and imports the Homepwner folder at `url`. Nothing is written unless the
    /// whole folder is valid; unchanged items are left alone, so re-importing changes nothing.
    public func importHomepwner(from url: URL, options: HomepwnerImportOptions = .init()) throws
        -> HomepwnerImportReport
    {
        let folder = try HomepwnerFolder.load(url, maxImageBytes: maxImageBytes)
        return try importHomepwner(folder, options: options)
    }

    /// Imports an already loaded folder; see `importHomepwner(from:options:)`. The items are
    /// decoded again one at a time and written in batches, never all held at once.
    public func importHomepwner(_ folder: HomepwnerFolder, options: HomepwnerImportOptions = .init()) throws
        -> HomepwnerImportReport
    {
        // Everything the store will hold is settled and checked before the first write: the
        // folder checked every name, and a label appended to one is checked here.
        if options.assetType == .name && folder.assetTypeLabels > 0 {
            try folder.forEachItem { item in _ = try wanted(item, folder: folder, options: options) }
        }
        var report = HomepwnerImportReport(
            sources: folder.sources, keysWithoutImage: folder.keysWithoutImage,
            assetTypeLabels: folder.assetTypeLabels, assetType: options.assetType, dryRun: options.dryRun)
        let imageFiles = folder.images.mapValues(\.url)
        var batch: [Item] = []
        batch.reserveCapacity(options.batchSize)
        func flush() throws {
            let outcome: LocalEditsOutcome
            do {
                outcome = try importLocalEdits(batch, imageFiles: imageFiles, dryRun: options.dryRun)
            } catch LocalEditError.imageFileChanged(let url) {
                throw HomepwnerError.malformed(file: url.path, reason: "changed while being imported; import again")
            }
            report.inserted.append(contentsOf: outcome.changes.inserted)
            report.updated.append(contentsOf: outcome.changes.updated)
            report.imagesWritten += outcome.changes.imagesWritten
            report.imageBytes += outcome.changes.imageBytes
            report.unchanged.append(contentsOf: outcome.unchanged)
            report.skippedDeleted.append(contentsOf: outcome.skippedDeleted)
            batch.removeAll(keepingCapacity: true)
        }
        // As a bulk pull: the WAL grows across batches and is folded into the database once.
        let run = {
            try folder.forEachItem { item in
                batch.append(try self.wanted(item, folder: folder, options: options))
                if batch.count == options.batchSize { try flush() }
            }
            if !batch.isEmpty { try flush() }
        }
        if options.dryRun { try run() } else { try bulkApply(run) }
        return report
    }

    /// The item as the store will hold it: the label appended to the name when asked, the
    /// image the folder has for it.
    private func wanted(_ item: HomepwnerItem, folder: HomepwnerFolder, options: HomepwnerImportOptions) throws
        -> Item
    {
        var name = item.name
        if let label = item.assetType, !label.isEmpty, options.assetType == .name { name += " [\(label)]" }
        do {
            try Self.validate(name: name, serial: item.serialNumber, value: item.valueInDollars, requireName: false)
        } catch {
            throw HomepwnerError.malformed(file: folder.url.path, reason: "item \(item.key): \(error)")
        }
        return Item(
            key: item.key, name: name, serialNumber: item.serialNumber, valueInDollars: item.valueInDollars,
            dateCreatedMilliseconds: item.dateCreatedMilliseconds, image: folder.images[item.key]?.ref,
            version: Version(stamp: .zero, origin: nodeID))
    }
}
