import Foundation
import GRDB
import HPSyncModel

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
        var items: [Item] = []
        items.reserveCapacity(batch.count)
        for exported in batch {
            let version = exported.versionValue ?? Version(stamp: localStamps.removeFirst(), origin: nodeID)
            items.append(try exported.item(version: version))
        }
        let localImages = try records(items.filter { $0.image != nil }.map(\.key))
        let localImageByKey = Dictionary(localImages.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        var records: [IncomingRecord] = []
        records.reserveCapacity(items.count)
        var refused: [ImageLeftOut] = []
        do {
            for (item, exported) in zip(items, batch) {
                var record = IncomingRecord(item: item)
                if let ref = item.image, !item.deleted {
                    let local = localImageByKey[item.key]
                    let wins = local.map { item.version > $0.version } ?? true
                    let sameImage = local.map { !$0.deleted && $0.image == ref } ?? false
                    if wins && !sameImage {
                        do {
                            record.image = try stageImportImage(
                                item, ref: ref, from: imagesDirectory, leftOut: exported.imageMissing == true)
                        } catch StoreError.digestMismatch(_, let actual) {
                            // One damaged file must not cost the whole import: the record comes in
                            // with its image missing, healed later like an export without images.
                            let file = imagesDirectory?.appendingPathComponent(item.key.rawValue).path ?? ""
                            refused.append(
                                ImageLeftOut(
                                    key: item.key,
                                    reason: "not imported: \(file) is damaged \(ImageLeftOut.difference(actual, ref))"))
                        }
                        record.imageMissing = record.image == nil
                    }
                }
                records.append(record)
            }
        } catch {
            for record in records { record.image?.discard() }
            throw error
        }
        do {
            var changes = try RemoteApply(store: self, records: records, options: .init(clockGuard: false)).run()
                .changeSet
            changes.imagesRefused = refused
            return changes
        } catch StoreError.invalidRecord(let key, let reason) {
            // From a peer this is a protocol fault; from an import file it is bad input data.
            throw StoreError.invalidImport("item \(key): \(reason)")
        }
    }

    /// The image's bytes from a local file with its digest or from `directory`; nil (recorded as
    /// missing) when no directory was given, or when the export says it `leftOut` the file.
    private func stageImportImage(_ item: Item, ref: ImageRef, from directory: URL?, leftOut: Bool) throws
        -> StagedImage?
    {
        if let local = try imageFile(withDigest: ref.digest),
            let staged = try? stageImage(copying: local, expected: ref)
        {
            return staged
        }
        guard let directory else { return nil }
        let file = directory.appendingPathComponent(item.key.rawValue)
        guard FileIO.exists(file.path) else {
            if leftOut { return nil }
            throw StoreError.missingImportImage(
                item.key, directory: directory.path, directoryExists: FileIO.exists(directory.path))
        }
        return try stageImage(copying: file, expected: ref)
    }

    /// Advances the clock by `count` local stamps in one transaction and returns them.
    func reserveLocalStamps(_ count: Int) throws -> [VersionStamp] {
        guard count > 0 else { return [] }
        return try write { db in
            var clock = try ChangeClock(db, now: self.clock.nowMilliseconds())
            let stamps = (0..<count).map { _ in clock.nextLocalStamp() }
            try clock.save(db)
            return stamps
        }
    }
}
