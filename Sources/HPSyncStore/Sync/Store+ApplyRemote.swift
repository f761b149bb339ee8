import Foundation
import GRDB
import HPSyncModel

/// Applying versions made elsewhere (a peer, an import) by the merge rule.
extension Store {
    /// Applies `records` and the checkpoint in one transaction: each record whose version beats
    /// the local one (greater `(stamp, origin)`) replaces it with this store's next seq; records
    /// stamped too far in the future are refused and listed; the rest are skipped. Images are
    /// renamed into place after the commit. On a thrown error nothing is applied and the staged
    /// temporaries are removed.
    ///
    /// A key this store has no row for counts, once it has collected tombstones, as a tombstone
    /// at its GC horizon (see `GCHorizon`): an older version loses. `reconcile` is the page's
    /// part in a full reconciliation, committed in the same transaction.
    ///
    /// `keepReplaced` says whether the live versions this batch deletes or overwrites go to the
    /// trash (a pull and a push receiver alike): the caller's trash policy, never the store's.
    public func applyRemote(
        _ records: [IncomingRecord], checkpoint: CheckpointUpdate?, reconcile: ReconcileStep? = nil,
        keepReplaced: Bool = false
    ) throws -> ApplyOutcome {
        try applyBatch(
            records, checkpoint: checkpoint, clockGuard: true, reconcile: reconcile, keepReplaced: keepReplaced)
    }

    func applyBatch(
        _ records: [IncomingRecord], checkpoint: CheckpointUpdate?, clockGuard: Bool, reconcile: ReconcileStep? = nil,
        keepReplaced: Bool = false
    ) throws -> ApplyOutcome {
        let originals = Set(records.compactMap { $0.image?.tempName })
        defer { for name in originals { FileIO.unlinkIfPresent(images.tempPath(name)) } }
        try records.forEach(validateIncoming)
        try configuration.testHooks.beforeApply?()
        // The journal may name a temporary only once its bytes are on disk.
        for record in records { try record.image?.durability.wait() }

        // Each use of a staged image gets its own hard link, so one staging can serve several keys.
        var linked: [String?] = []
        var unused = Set<String>()
        defer { for name in unused { FileIO.unlinkIfPresent(images.tempPath(name)) } }
        for record in records {
            if let staged = record.image {
                let name = try images.linkTemp(staged.tempName)
                unused.insert(name)
                linked.append(name)
            } else {
                linked.append(nil)
            }
        }
        // The names too: the journal row committed below must not outlive its temporary's name.
        if !unused.isEmpty { try images.syncDirectory() }

        let now = clock.nowMilliseconds()
        var outcome = ApplyOutcome()
        var journaled: [(key: ItemKey, temp: String)] = []
        var superseded: [String] = []
        var unlinkKeys: [ItemKey] = []
        var missingImages: [ItemKey] = []
        try write { db in
            var changeClock = try ChangeClock(db, now: now)
            var journaledHere: [(key: ItemKey, temp: String)] = []
            var supersededHere: [String] = []
            var unlinkHere: [ItemKey] = []
            var missingHere: [ItemKey] = []
            var result = ApplyOutcome()
            // One lookup for the batch; rows written below replace their entries.
            var locals = try ItemRecord.fetchMany(db, keys: records.map(\.item.key))
            let virtualTombstone = changeClock.meta.gcHorizon.virtualTombstone
            for (index, record) in records.enumerated() {
                let item =
                    record.item.deleted
                    ? Item.tombstone(key: record.item.key, version: record.item.version) : record.item
                let key = item.key
                if clockGuard, let reason = clockGuardRefusal(item.version, now: now) {
                    result.refused.append(RefusedRecord(key: key, reason: reason))
                    continue
                }
                changeClock.observe(item.version.stamp)
                let local = locals[key.rawValue]
                if let base = try local?.version ?? virtualTombstone, !(item.version > base) {
                    result.skipped.append(key)
                    continue
                }
                let localLive = local.map { !$0.deleted } ?? false
                if keepReplaced, localLive, let local { try trash(db, local, deleted: item.deleted, now: now) }
                if !item.deleted, let ref = item.image {
                    if let temp = linked[index] {
                        if let old = try journal(db, key: key, tempName: temp) { supersededHere.append(old) }
                        journaledHere.append((key, temp))
                        result.imagesWritten += 1
                        result.imageBytes += ref.size
                    } else if record.imageMissing, !(localLive && local?.imageRef == ref) {
                        // The file, if any, belongs to the version replaced here: it goes after the commit.
                        if let old = try dropJournal(db, key: key) { supersededHere.append(old) }
                        try rememberImageToHeal(db, key: key, now: now)
                        missingHere.append(key)
                    } else if !(localLive && local?.imageRef == ref) {
                        throw StoreError.invalidRecord(key, reason: "its image \(ref.digest) was not staged")
                    }
                } else if local != nil {
                    // No image any more: drop a journaled write (only rows can have one) and the file.
                    if let old = try dropJournal(db, key: key) { supersededHere.append(old) }
                    if local?.imageDigest != nil || item.deleted { unlinkHere.append(key) }
                }
                let written = ItemRecord(item, seq: changeClock.nextSeq())
                try written.write(db)
                locals[key.rawValue] = written
                switch (localLive, item.deleted) {
                case (false, false): result.inserted.append(key)
                case (true, false): result.updated.append(key)
                case (true, true): result.deleted.append(key)
                case (false, true): result.tombstonesRecorded.append(key)
                }
            }
            if let reconcile {
                let effects = try self.reconcile(
                    db, reconcile, clock: &changeClock, keepReplaced: keepReplaced, now: now)
                result.deleted += effects.deleted
                result.reconciled = effects.deleted
                unlinkHere += effects.unlink
                supersededHere += effects.supersededTemps
            }
            if let checkpoint {
                try CheckpointRecord(
                    peerStoreID: Data(checkpoint.peerStore.bytes), direction: checkpoint.direction.rawValue,
                    seq: checkpoint.seq, updatedAt: Int64(now)
                ).save(db)
            }
            try changeClock.save(db)
            outcome = result
            journaled = journaledHere
            superseded = supersededHere
            unlinkKeys = unlinkHere
            missingImages = missingHere
        }
        for entry in journaled { unused.remove(entry.temp) }
        for name in superseded { FileIO.unlinkIfPresent(images.tempPath(name)) }
        try finalizeImages(journaled)
        try unlinkImagesIfUnused(unlinkKeys)
        for key in missingImages { FileIO.unlinkIfPresent(images.finalPath(key)) }
        outcome.imagesMissing = missingImages
        if !records.isEmpty {
            logger.debug(
                "applied remote batch",
                metadata: [
                    "received": "\(records.count)", "inserted": "\(outcome.inserted.count)",
                    "updated": "\(outcome.updated.count)", "deleted": "\(outcome.deleted.count)",
                    "skipped": "\(outcome.skipped.count)", "refused": "\(outcome.refused.count)",
                ])
        }
        return outcome
    }

    /// Checks what every record must respect, whatever the local state.
    private func validateIncoming(_ record: IncomingRecord) throws {
        let item = record.item
        guard !item.deleted else { return }
        do {
            try Self.validate(name: item.name, serial: item.serialNumber, requireName: false)
        } catch {
            throw StoreError.invalidRecord(item.key, reason: "\(error)")
        }
        if let ref = item.image, ref.size < 0 || ref.size > configuration.maxImageBytes {
            throw StoreError.invalidRecord(item.key, reason: "its image size \(ref.size) is out of bounds")
        }
        if let staged = record.image, staged.ref != item.image {
            throw StoreError.invalidRecord(item.key, reason: "the staged image does not match the record's image")
        }
    }
}
