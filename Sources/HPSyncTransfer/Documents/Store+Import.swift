import Foundation
import HPSyncModel
import HPSyncStore

/// Reading an export back in through the merge rule, so re-importing changes nothing.
extension Store {
    /// How many records each import transaction applies.
    static let importBatchSize = 5000

    /// Imports an export JSON file. Versioned records go through the merge rule like a pull;
    /// records without a version become local changes. Images come from `imagesDirectory/<KEY>`
    /// (verified against the digest) unless a local file already has that digest. Without
    /// `imagesDirectory` (an export made without `--images`) an image no local file has is
    /// recorded as missing: the record is applied, the key remembered for healing and listed in
    /// `imagesMissing`. The clock guard does not apply: importing is the user's explicit choice
    /// of those versions.
    public func importJSON(from url: URL, imagesDirectory: URL?) throws -> ChangeSet {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw StoreError.missingImportFile(path: url.path)
        }
        let decodeStart = ContinuousClock.now
        let document = try ExportReader.document(Array(data))
        guard document.format == ExportDocument.formatName else {
            throw StoreError.invalidImport("the format is '\(document.format)', not '\(ExportDocument.formatName)'")
        }
        guard document.version == ExportDocument.currentVersion else {
            throw StoreError.invalidImport("export version \(document.version) is not supported (expected 1)")
        }
        logger.debug(
            "decoded import",
            metadata: ["items": "\(document.items.count)", "elapsed": "\(ContinuousClock.now - decodeStart)"])
        var changes = ChangeSet()
        var start = 0
        while start < document.items.count {
            let batch = document.items[start..<min(start + Self.importBatchSize, document.items.count)]
            start += Self.importBatchSize
            changes.formUnion(try importBatch(Array(batch), imagesDirectory: imagesDirectory))
        }
        return changes
    }

    func importBatch(_ batch: [ExportedItem], imagesDirectory: URL?) throws -> ChangeSet {
        let unversioned = batch.filter { $0.versionValue == nil }.count
        var localStamps = try reserveLocalStamps(unversioned)[...]
        var records: [ImportRecord] = []
        records.reserveCapacity(batch.count)
        for exported in batch {
            let version = exported.versionValue ?? Version(stamp: localStamps.removeFirst(), origin: nodeID)
            records.append(
                ImportRecord(
                    item: try exported.item(version: version), imageLeftOut: exported.imageMissing == true,
                    isLocalEdit: exported.versionValue == nil))
        }
        return try importRecords(records, imagesDirectory: imagesDirectory)
    }
}
