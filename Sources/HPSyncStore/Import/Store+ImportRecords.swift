import Foundation
import GRDB
import HPSyncModel

/// One record of an import file (an hp-sync export, a CSV), as the store applies it.
package struct ImportRecord: Sendable {
    /// The record's item at its version (a local stamp from `reserveLocalStamps` when the file
    /// named none).
    package var item: Item
    /// The export says it left the image file out on purpose: a missing file is recorded as
    /// missing instead of refusing the import.
    package var imageLeftOut: Bool
    /// The file named no version: `item.version` is a local stamp, and the row is a local edit
    /// of the fields it changes (`IncomingRecord.isLocalEdit`).
    package var isLocalEdit: Bool

    package init(item: Item, imageLeftOut: Bool, isLocalEdit: Bool = false) {
        self.item = item
        self.imageLeftOut = imageLeftOut
        self.isLocalEdit = isLocalEdit
    }
}

/// Import files applied through the merge rule, so re-importing changes nothing.
extension Store {
    /// Applies one batch of import records as a pull would (versions beat or lose by the merge
    /// rule) but without the clock guard: importing is the user's explicit choice of those
    /// versions. Images come from a local file with the same digest, else from
    /// `imagesDirectory/<KEY>` (verified against the digest); with no directory an image is
    /// recorded as missing. A damaged file costs only its image (listed in `imagesRefused`);
    /// a record the store cannot hold is `StoreError.invalidImport`.
    package func importRecords(_ batch: [ImportRecord], imagesDirectory: URL?) throws -> ChangeSet {
        let items = batch.map(\.item)
        let localImages = try records(items.filter { $0.image != nil }.map(\.key))
        let localImageByKey = Dictionary(localImages.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        var records: [IncomingRecord] = []
        records.reserveCapacity(items.count)
        var refused: [ImageLeftOut] = []
        do {
            for record in batch {
                let item = record.item
                var incoming = IncomingRecord(item: item)
                incoming.isLocalEdit = record.isLocalEdit
                if let ref = item.image, !item.deleted {
                    let local = localImageByKey[item.key]
                    let wins = local.map { item.version > $0.version } ?? true
                    let sameImage = local.map { !$0.deleted && $0.image == ref } ?? false
                    if wins && !sameImage {
                        do {
                            incoming.image = try stageImportImage(
                                item, ref: ref, from: imagesDirectory, leftOut: record.imageLeftOut)
                        } catch StoreError.digestMismatch(_, let actual) {
                            // One damaged file must not cost the whole import: the record comes in
                            // with its image missing, healed later like an export without images.
                            let file = imagesDirectory?.appendingPathComponent(item.key.rawValue).path ?? ""
                            refused.append(
                                ImageLeftOut(
                                    key: item.key,
                                    reason: "not imported: \(file) is damaged \(ImageLeftOut.difference(actual, ref))"))
                        }
                        incoming.imageMissing = incoming.image == nil
                    }
                }
                records.append(incoming)
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
        // The photo a deleted item keeps for its revival (a CSV row without image columns
        // revives it with that photo): the trash folder's copy.
        if let kept = try? stageImage(copying: URL(fileURLWithPath: trashImages.path(ref.digest)), expected: ref) {
            return kept
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

    /// Advances the clock by `count` local stamps in one transaction and returns them, for the
    /// records of an import file that name no version.
    package func reserveLocalStamps(_ count: Int) throws -> [VersionStamp] {
        guard count > 0 else { return [] }
        return try write { db in
            var clock = try ChangeClock(db, now: self.clock.nowMilliseconds())
            let stamps = (0..<count).map { _ in clock.nextLocalStamp() }
            try clock.save(db)
            return stamps
        }
    }
}
