import Foundation
import GRDB
import HPSyncModel

/// What `importLocalEdits` did (or, in a dry run, would do) with one batch.
package struct LocalEditsOutcome: Sendable {
    /// Inserted and updated keys, images written (all planned, in a dry run).
    package var changes = ChangeSet()
    /// Items the store already had with the same contents.
    package var unchanged: [ItemKey] = []
    /// Items deleted in this store (or whose tombstone `gc` collected), left deleted.
    package var skippedDeleted: [ItemKey] = []
}

/// Why `importLocalEdits` stopped, for the importer to word in its own terms.
package enum LocalEditError: Error, Equatable {
    /// An image file's bytes are no longer those the importer measured: it changed meanwhile.
    case imageFileChanged(URL)
}

/// The change one imported item asks of the store.
enum LocalEditPlan: Equatable {
    case insert
    case update
    case unchanged
    case skipDeleted

    /// Compares `wanted` (the item as the importer has it, with an image ref if it has a file)
    /// with the store's row. A missing image file keeps the store's image. `collected`: the store
    /// has no row because `gc` dropped the key's tombstone; the key is still deleted.
    static func of(_ wanted: Item, local: Item?, collected: Bool) -> LocalEditPlan {
        guard let local else { return collected ? .skipDeleted : .insert }
        if local.deleted { return .skipDeleted }
        let same =
            local.name == wanted.name && local.serialNumber == wanted.serialNumber
            && local.valueInDollars == wanted.valueInDollars
            && local.dateCreatedMilliseconds == wanted.dateCreatedMilliseconds
            && (wanted.image == nil || wanted.image == local.image)
        return same ? .unchanged : .update
    }
}

/// Items from another program's files (the Homepwner app's) taken in as local edits.
extension Store {
    /// Imports one batch of items as local edits in one transaction, for importers of other
    /// programs' files (HPSyncTransfer's Homepwner import).
    ///
    /// Each item is compared with the store's row: an equal one is left alone, a key deleted
    /// here (or collected by `gc`) stays deleted, anything else becomes a local edit stamped by
    /// this store's clock. An item's `image` names the file in `imageFiles` it comes from; it is
    /// copied and checked before the transaction, so a file that changed since the importer
    /// measured it fails the batch (`LocalEditError`). A nil image keeps the store's. `dryRun` plans and writes
    /// nothing. The caller validates names and serials first (`validate(name:serial:requireName:)`).
    package func importLocalEdits(_ batch: [Item], imageFiles: [ItemKey: URL], dryRun: Bool) throws
        -> LocalEditsOutcome
    {
        let locals = Dictionary(try records(batch.map(\.key)).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let collected = try read { db in try collectedKeys(db, among: batch.map(\.key).filter { locals[$0] == nil }) }
        var staged: [ItemKey: String] = [:]
        defer { for name in staged.values { FileIO.unlinkIfPresent(images.tempPath(name)) } }
        if !dryRun {
            for item in batch {
                let plan = LocalEditPlan.of(item, local: locals[item.key], collected: collected.contains(item.key))
                guard plan == .insert || plan == .update, let ref = item.image, ref != locals[item.key]?.image,
                    let source = imageFiles[item.key]
                else { continue }
                let copy = try images.writeTemp(copying: source, maxBytes: configuration.maxImageBytes, validate: true)
                staged[item.key] = copy.name
                guard copy.ref == ref else { throw LocalEditError.imageFileChanged(source) }
            }
        }
        var outcome = LocalEditsOutcome()
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
                let plan = LocalEditPlan.of(item, local: local, collected: (gone ?? collected).contains(item.key))
                switch plan {
                case .unchanged:
                    outcome.unchanged.append(item.key)
                    continue
                case .skipDeleted:
                    outcome.skippedDeleted.append(item.key)
                    continue
                case .insert: outcome.changes.inserted.append(item.key)
                case .update: outcome.changes.updated.append(item.key)
                }
                let newImage = item.image != nil && item.image != local?.image
                if item.image == nil { item.image = local?.image }
                if newImage, let ref = item.image {
                    outcome.changes.imagesWritten += 1
                    outcome.changes.imageBytes += ref.size
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
                outcome = LocalEditsOutcome()
                journaled = []
                superseded = []
                try apply(db)
            }
        }
        for entry in journaled { staged.removeValue(forKey: entry.key) }
        for name in superseded { FileIO.unlinkIfPresent(images.tempPath(name)) }
        try finalizeImages(journaled)
        return outcome
    }
}
