import Foundation
import GRDB
import HPSyncModel

/// Importing a Homepwner Documents folder as local changes, and writing one back.
extension Store {
    /// How many items each import transaction applies.
    static let homepwnerBatchSize = 1000

    /// Reads, checks and imports the Homepwner folder at `url`. Nothing is written unless the
    /// whole folder is valid; unchanged items are left alone, so re-importing changes nothing.
    public func importHomepwner(from url: URL, options: HomepwnerImportOptions = .init()) throws
        -> HomepwnerImportReport
    {
        let folder = try HomepwnerFolder.load(url, maxImageBytes: configuration.maxImageBytes)
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
        var start = 0
        while start < wanted.count {
            let batch = Array(wanted[start..<min(start + Self.homepwnerBatchSize, wanted.count)])
            start += Self.homepwnerBatchSize
            try importHomepwnerBatch(batch, images: folder.images, dryRun: options.dryRun, into: &report)
        }
        return report
    }

    private func importHomepwnerBatch(
        _ batch: [Item], images sources: [ItemKey: HomepwnerFolder.Image], dryRun: Bool,
        into report: inout HomepwnerImportReport
    ) throws {
        let locals = Dictionary(try records(batch.map(\.key)).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let collected = try read { db in try collectedKeys(db, among: batch.map(\.key).filter { locals[$0] == nil }) }
        var staged: [ItemKey: String] = [:]
        defer { for name in staged.values { FileIO.unlinkIfPresent(images.tempPath(name)) } }
        if !dryRun {
            for item in batch {
                let plan = HomepwnerPlan.of(item, local: locals[item.key], collected: collected.contains(item.key))
                guard plan == .insert || plan == .update, let ref = item.image, ref != locals[item.key]?.image,
                    let source = sources[item.key]
                else { continue }
                let copy = try images.writeTemp(
                    copying: source.url, maxBytes: configuration.maxImageBytes, validate: true)
                staged[item.key] = copy.name
                guard copy.ref == ref else {
                    throw HomepwnerError.malformed(
                        file: source.url.path, reason: "changed while being imported; import again")
                }
            }
        }
        var changes = ChangeSet()
        var unchanged: [ItemKey] = []
        var skipped: [ItemKey] = []
        var journaled: [(key: ItemKey, temp: String)] = []
        var superseded: [String] = []
        let apply = { (db: Database?) throws in
            var clock = try db.map { try ChangeClock($0, now: self.clock.nowMilliseconds()) }
            // Planned again inside the transaction: another process may have changed the rows.
            let current = try db.map { try ItemRecord.fetchMany($0, keys: batch.map(\.key)) }
            let gone = try db.map { db in
                try self.collectedKeys(db, among: batch.map(\.key).filter { current?[$0.rawValue] == nil })
            }
            for var item in batch {
                let local = try current.map { try $0[item.key.rawValue]?.item() } ?? locals[item.key]
                let plan = HomepwnerPlan.of(item, local: local, collected: (gone ?? collected).contains(item.key))
                switch plan {
                case .unchanged:
                    unchanged.append(item.key)
                    continue
                case .skipDeleted:
                    skipped.append(item.key)
                    continue
                case .insert: changes.inserted.append(item.key)
                case .update: changes.updated.append(item.key)
                }
                let newImage = item.image != nil && item.image != local?.image
                if item.image == nil { item.image = local?.image }
                if newImage, let ref = item.image {
                    changes.imagesWritten += 1
                    changes.imageBytes += ref.size
                }
                guard let db, var current = clock else { continue }
                item.version = Version(stamp: current.nextLocalStamp(), origin: self.nodeID)
                try ItemRecord(item, seq: current.nextSeq()).write(db)
                if newImage {
                    guard let temp = staged[item.key] else {
                        throw StoreError.database("the image of \(item.key) was not staged; import again")
                    }
                    if let old = try self.journal(db, key: item.key, tempName: temp) { superseded.append(old) }
                    journaled.append((item.key, temp))
                }
                clock = current
            }
            if let db, let clock { try clock.save(db) }
        }
        if dryRun {
            try apply(nil)
        } else {
            try write { db in
                changes = ChangeSet()
                unchanged = []
                skipped = []
                journaled = []
                superseded = []
                try apply(db)
            }
        }
        for entry in journaled { staged.removeValue(forKey: entry.key) }
        for name in superseded { FileIO.unlinkIfPresent(images.tempPath(name)) }
        try finalizeImages(journaled)
        report.changes.formUnion(changes)
        report.unchanged += unchanged
        report.skippedDeleted += skipped
    }
}
