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

    /// Lists `key` under what `plan` does with it; true when that changes the store.
    mutating func list(_ key: ItemKey, _ plan: LocalEditPlan) -> Bool {
        switch plan {
        case .unchanged: unchanged.append(key)
        case .skipDeleted: skippedDeleted.append(key)
        case .insert: changes.inserted.append(key)
        case .update: changes.updated.append(key)
        }
        return plan == .insert || plan == .update
    }
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
    /// this store's clock. Rows are written in key order (so seqs follow key order within a
    /// batch): neighbouring keys share index pages. An item's `image` names the file in
    /// `imageFiles` it comes from; it is copied and checked before the transaction, so a file
    /// that changed since the importer measured it fails the batch (`LocalEditError`). A nil
    /// image keeps the store's. A batch that changes nothing commits nothing. `dryRun` plans and
    /// writes nothing. The caller validates names and serials first
    /// (`validate(name:serial:value:requireName:)`).
    package func importLocalEdits(_ batch: [Item], imageFiles: [ItemKey: URL], dryRun: Bool) throws
        -> LocalEditsOutcome
    {
        let batch = batch.sorted { $0.key.rawValue < $1.key.rawValue }
        if dryRun { return try planLocalEdits(batch) }
        // Only an item with an image file needs the store's row before the transaction: its
        // image is copied and checked first, when it will be new.
        let withImage = batch.filter { $0.image != nil && imageFiles[$0.key] != nil }
        let locals = Dictionary(
            try records(withImage.map(\.key)).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let collected = try read { db in
            try collectedKeys(db, among: withImage.map(\.key).filter { locals[$0] == nil })
        }
        var staged: [ItemKey: String] = [:]
        defer { for name in staged.values { FileIO.unlinkIfPresent(images.tempPath(name)) } }
        for item in withImage {
            let plan = LocalEditPlan.of(item, local: locals[item.key], collected: collected.contains(item.key))
            guard plan == .insert || plan == .update, let ref = item.image, ref != locals[item.key]?.image,
                let source = imageFiles[item.key]
            else { continue }
            let copy = try images.writeTemp(copying: source, maxBytes: configuration.maxImageBytes, validate: true)
            staged[item.key] = copy.name
            guard copy.ref == ref else { throw LocalEditError.imageFileChanged(source) }
        }
        var outcome = LocalEditsOutcome()
        var journaled: [(key: ItemKey, temp: String)] = []
        var superseded: [String] = []
        try writeIfChanged { db in
            outcome = LocalEditsOutcome()
            journaled = []
            superseded = []
            var clock = try ChangeClock(db, now: self.clock.nowMilliseconds())
            // A new key is inserted outright (unless `gc` collected it); only a key the store
            // has is read and compared, so a first import makes one index probe per item.
            let insert = try RawStatement(db, sql: Self.insertUnlessKnown)
            let lookup = try RawStatement(db, sql: ItemRecord.lookup)
            for var item in batch {
                var next = clock
                item.version = Version(stamp: next.nextLocalStamp(), origin: self.nodeID)
                let seq = next.nextSeq()
                let local: Item?
                var localRow: ItemRecord?
                let plan: LocalEditPlan
                if try ItemRecord(item, seq: seq).insert(with: insert, db) {
                    (local, plan) = (nil, .insert)
                } else {
                    // Refused: a row exists, or no row but the key is a collected tombstone.
                    localRow = try ItemRecord.fetch(with: lookup, key: item.key)
                    local = try localRow?.item()
                    plan = LocalEditPlan.of(item, local: local, collected: local == nil)
                }
                guard outcome.list(item.key, plan) else { continue }
                let newImage = item.image != nil && item.image != local?.image
                if item.image == nil { item.image = local?.image }
                if newImage, let ref = item.image {
                    outcome.changes.imagesWritten += 1
                    outcome.changes.imageBytes += ref.size
                }
                if plan == .update, let local {
                    let state = try Self.locallyEdited(db, localRow, item: item, edit: FieldEdit(from: local, to: item))
                    try Self.writeMergeState(db, state, seq: seq, previous: localRow)
                }
                clock = next
                if newImage {
                    guard let temp = staged[item.key] else {
                        throw StoreError.database("the image of \(item.key) was not staged; import again")
                    }
                    if let old = try ImageJournal(db).record(key: item.key, tempName: temp) { superseded.append(old) }
                    journaled.append((item.key, temp))
                }
            }
            try clock.save(db)
            return !outcome.changes.isEmpty
        }
        for entry in journaled { staged.removeValue(forKey: entry.key) }
        for name in superseded { FileIO.unlinkIfPresent(images.tempPath(name)) }
        try finalizeImages(journaled)
        return outcome
    }

    /// What `importLocalEdits` would do with `batch`, read without writing (a dry run).
    private func planLocalEdits(_ batch: [Item]) throws -> LocalEditsOutcome {
        try read { db in
            let rows = try ItemRecord.fetchMany(db, keys: batch.map(\.key))
            let collected = try collectedKeys(db, among: batch.map(\.key).filter { rows[$0.rawValue] == nil })
            var outcome = LocalEditsOutcome()
            for item in batch {
                let local = try rows[item.key.rawValue]?.item()
                let plan = LocalEditPlan.of(item, local: local, collected: collected.contains(item.key))
                guard outcome.list(item.key, plan) else { continue }
                guard let ref = item.image, ref != local?.image else { continue }
                outcome.changes.imagesWritten += 1
                outcome.changes.imageBytes += ref.size
            }
            return outcome
        }
    }

    /// Runs `body` in one IMMEDIATE write transaction that commits only when `body` returns
    /// true: an import batch that changed nothing rolls back, and writes (and fsyncs) nothing.
    private func writeIfChanged(_ body: (Database) throws -> Bool) throws {
        try wrap {
            try database.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) { try body(db) ? .commit : .rollback }
            }
        }
    }

    /// Inserts a row for a key the store neither has nor remembers as collected by `gc`.
    static let insertUnlessKnown = """
        INSERT INTO item (key, name, serialNumber, valueInDollars, dateCreated, imageDigest,
          imageSize, stamp, origin, deleted, seq, fields)
        SELECT ?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12
        WHERE NOT EXISTS (SELECT 1 FROM gcCollectedKey WHERE key = ?1)
        ON CONFLICT(key) DO NOTHING
        """
}
