import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// One batch of versions made elsewhere (a peer's records, an import) applied by the merge rule:
/// records and options in, an `ApplyOutcome` out.
///
/// Everything one remote apply does is here, in the order it happens: the records are checked,
/// their staged images linked and made durable; one transaction applies each record that beats
/// the local version, keeps what it replaces in the trash when the caller's policy says so,
/// journals the images, takes the page's step of a full reconciliation and saves the
/// checkpoint; after the commit the images are renamed into place and the replaced ones
/// unlinked. On a thrown error nothing is applied and the staged temporaries are removed.
///
/// Inside the transaction it works through small types of its own: `ImageJournal` (the rows
/// that pair an image's temporary with its key, and the images left to heal), `TrashInsertion`
/// (what it replaces, kept) and `ChangeClock` (seqs and stamps); after the commit,
/// `Store.finalizeImages` renames the journaled temporaries into place.
struct RemoteApply {
    /// How a batch is applied; the caller decides each, the store has no setting of its own.
    struct Options {
        /// Where the session got to, committed with the batch.
        var checkpoint: CheckpointUpdate?
        /// Refuse records stamped too far ahead of this store's clock (a peer's records; an
        /// import is the user's explicit choice of those versions).
        var clockGuard = true
        /// The page's part in a full reconciliation, committed in the same transaction.
        var reconcile: ReconcileStep?
        /// The trash policy: whether the live versions the batch deletes or overwrites (a pull
        /// and a push receiver alike) go to the trash.
        var keepReplaced = false
        /// The newest stamp the caller saw from the source beside these records (manifest
        /// entries it declined because this store's version is newer): raises the mark of
        /// stamps received from other nodes, which `clock reset` restamps above.
        var observed = VersionStamp.zero
        /// The lowest and highest stamps of the entries the caller declined as older than this
        /// store's versions: not kept here, they may still live on their makers, and `clock
        /// reset` must restamp above them (`ChangeClock.noteUnkept`).
        var declined: ClosedRange<VersionStamp>?
    }

    let store: Store
    let records: [IncomingRecord]
    let options: Options

    /// Applies the batch; see the type's summary.
    func run() throws -> ApplyOutcome {
        let images = store.images
        let originals = Set(records.compactMap { $0.image?.tempName })
        defer { for name in originals { FileIO.unlinkIfPresent(images.tempPath(name)) } }
        try records.forEach(validate)
        try store.configuration.testHooks.beforeApply?()
        if records.isEmpty, options.reconcile == nil, try changesNothing() { return ApplyOutcome() }
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

        let now = store.clock.nowMilliseconds()
        var outcome = ApplyOutcome()
        var journaled: [(key: ItemKey, temp: String)] = []
        var superseded: [String] = []
        var unlinkKeys: [ItemKey] = []
        var missingImages: [ItemKey] = []
        try store.writeBatch { db in
            var changeClock = try ChangeClock(db, now: now)
            changeClock.observeDeclined(options.observed)
            if let declined = options.declined { changeClock.noteUnkept(declined.lowerBound, declined.upperBound) }
            var journaledHere: [(key: ItemKey, temp: String)] = []
            var supersededHere: [String] = []
            var unlinkHere: [ItemKey] = []
            var missingHere: [ItemKey] = []
            var result = ApplyOutcome()
            // Each record's local row is read just before it is written, in the transaction: the
            // write then finds the leaves the read brought in (a sink's batch comes in key order,
            // so the pages pass through the cache once; a first pass reading every row ahead
            // evicted them again before the writes on a batch larger than the cache), and a key
            // the batch holds twice meets the row its first record wrote.
            let virtualTombstone = changeClock.meta.gcHorizon.virtualTombstone
            let lookup = try RawStatement(db, sql: ItemRecord.lookup)
            let upsert = try RawStatement(db, sql: ItemRecord.upsert)
            let update = try RawStatement(db, sql: ItemRecord.update)
            let insertion = try RawStatement(db, sql: ItemRecord.insertion)
            var trashInsertion = TrashInsertion(db, images: images, trash: store.trashDirectory)
            let trashed = store.trashImages
            var restoredFromTrash = false
            var fullCache = false
            // Journal rows live from an image's commit to its rename (or until a crash is rolled
            // forward): most batches find none, and then look up only the keys they journal
            // themselves (a key twice in the batch), not every record after their first image.
            let journal = ImageJournal(db)
            let journalHadRows = try journal.hasEntries()
            var journaledKeys = Set<ItemKey>()
            func mayBeJournaled(_ key: ItemKey) -> Bool { journalHadRows || journaledKeys.contains(key) }
            for (index, record) in records.enumerated() {
                var item =
                    record.item.deleted
                    ? Item.tombstone(key: record.item.key, version: record.item.version) : record.item
                let key = item.key
                if options.clockGuard, let reason = store.clockGuardRefusal(item.version, now: now) {
                    result.refused.append(RefusedRecord(key: key, reason: reason))
                    continue
                }
                changeClock.observe(item.version.stamp)
                // Taken whole (a new key, or newer than a whole record), a state keeps its flag.
                var stored = record.mergeState.map { StoredMergeState($0, joined: record.item.joined) }
                var written = record.mergeState
                // A key the sink found no row for is inserted at once; a key the store has
                // fails that insert and takes the way of the others.
                let inserted =
                    try record.likelyNew && virtualTombstone == nil
                    && Self.insertIfAbsent(db, item, fields: stored?.fields, with: insertion, clock: &changeClock)
                let local = inserted ? nil : try ItemRecord.fetch(with: lookup, key: key)
                // Stamped below the row: declined, or joined into it; either way not this key's row.
                // (An equal stamp is the row's own, which the reset covers as it covers the row.)
                if let local, item.version.stamp.rawValue < UInt64(bitPattern: local.stamp) {
                    changeClock.noteUnkept(item.version.stamp, item.version.stamp)
                }
                if local != nil, !fullCache {
                    try Store.useFullWriterCache(db)
                    fullCache = true
                }
                // Field merge: the join, written only when it holds more than the store's. Two whole
                // records join as the record-level rule below says, without building states; a
                // tombstone that deletes a live item keeps its fields, and so does one that meets an
                // older live version.
                if record.isLocalEdit, let local {
                    guard let state = try localEdit(db, item, local: local, clock: &changeClock) else {
                        result.skipped.append(key)
                        continue
                    }
                    stored = StoredMergeState(state)
                    item = state.item
                    written = state
                    if item.deleted {
                        keepPhotos(
                            of: state, item: item, record: record, local: local, temp: linked[index],
                            in: &trashInsertion)
                    }
                } else if record.joinsFields, let local,
                    record.mergeState != nil || local.fields != nil || item.deleted != local.deleted
                {
                    guard let join = try Self.join(db, record, item, local: local, received: stored) else {
                        result.skipped.append(key)
                        continue
                    }
                    stored = join.stored
                    item = join.state.item
                    keepPhotos(
                        of: join.state, item: item, record: record, local: local, temp: linked[index],
                        in: &trashInsertion)
                    written = join.state
                } else if let base = try local?.version ?? virtualTombstone, !(item.version > base) {
                    result.skipped.append(key)
                    continue
                }
                // A tombstone's photo the sink fetched for it waits in the trash folder for a
                // revival (Protocol.md 5.9 "A tombstone's photo").
                if item.deleted, let temp = linked[index], let written {
                    trashInsertion.addPhoto(record.image?.ref, at: images.tempPath(temp), keptBy: written)
                }
                let localLive = local.map { !$0.deleted } ?? false
                if options.keepReplaced, localLive, let local, try !Self.sameContents(local.item(), item) {
                    try trashInsertion.add(replaced: local, deleted: item.deleted, now: now)
                }
                if !item.deleted, let ref = item.image {
                    // A join may keep the store's photo while the record brought another.
                    // (A tombstone's record may bring the photo its join revives, Protocol.md 5.9.)
                    if let temp = linked[index], record.image?.ref == ref {
                        if let old = try journal.record(key: key, tempName: temp) { supersededHere.append(old) }
                        journaledKeys.insert(key)
                        journaledHere.append((key, temp))
                        result.imagesWritten += 1
                        result.imageBytes += ref.size
                    } else if record.imageMissing || record.joinsFields, !(localLive && local?.imageRef == ref) {
                        // A join can also bring back a photo no peer sent here (one a tombstone
                        // kept): from the trash folder's copy when this store kept one, else
                        // healed by digest like an import's.
                        if let staged = try? store.stageImage(
                            copying: URL(fileURLWithPath: trashed.path(ref.digest)), expected: ref)
                        {
                            let temp = staged.tempName
                            unused.insert(temp)
                            restoredFromTrash = true
                            if let old = try journal.record(key: key, tempName: temp) { supersededHere.append(old) }
                            journaledKeys.insert(key)
                            journaledHere.append((key, temp))
                        } else {
                            // The file, if any, belongs to the version replaced here: it goes after the commit.
                            if mayBeJournaled(key), let old = try journal.drop(key: key) {
                                supersededHere.append(old)
                            }
                            try journal.rememberToHeal(key: key, now: now)
                            missingHere.append(key)
                        }
                    } else if !(localLive && local?.imageRef == ref) {
                        throw StoreError.invalidRecord(key, reason: "its image \(ref.digest) was not staged")
                    }
                } else if local != nil {
                    // No image any more: drop a journaled write (only rows can have one) and the file.
                    if mayBeJournaled(key), let old = try journal.drop(key: key) { supersededHere.append(old) }
                    if local?.imageDigest != nil || item.deleted { unlinkHere.append(key) }
                }
                if !inserted {
                    // A row read just above is there to update; without one (a virtual tombstone's
                    // key), the upsert inserts.
                    let row = ItemRecord(item, seq: changeClock.nextSeq(), fields: stored?.fields)
                    if local == nil { try row.write(with: upsert) } else { try row.write(with: update) }
                    try row.writeFields(db, previousHadFields: local?.fields != nil)
                }
                if local?.fields != nil { try ConflictRecord.deleteAll(db, key: key) }
                for conflict in stored?.conflicts ?? [] { try conflict.insert(db) }
                switch (localLive, item.deleted) {
                case (false, false): result.inserted.append(key)
                case (true, false): result.updated.append(key)
                case (true, true): result.deleted.append(key)
                case (false, true): result.tombstonesRecorded.append(key)
                }
            }
            try trashInsertion.finish()
            if restoredFromTrash { try images.syncDirectory() }
            if let step = options.reconcile {
                let effects = try reconcile(db, step, clock: &changeClock, now: now)
                result.deleted += effects.deleted
                result.reconciled = effects.deleted
                unlinkHere += effects.unlink
                supersededHere += effects.supersededTemps
            }
            if let checkpoint = options.checkpoint {
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
        try store.finalizeImages(journaled)
        try store.unlinkImagesIfUnused(unlinkKeys)
        for key in missingImages { FileIO.unlinkIfPresent(images.finalPath(key)) }
        outcome.imagesMissing = missingImages
        if !records.isEmpty {
            store.logger.debug(
                "applied remote batch",
                metadata: [
                    "received": "\(records.count)", "inserted": "\(outcome.inserted.count)",
                    "updated": "\(outcome.updated.count)", "deleted": "\(outcome.deleted.count)",
                    "skipped": "\(outcome.skipped.count)", "refused": "\(outcome.refused.count)",
                ])
        }
        return outcome
    }

    /// Whether an empty batch would write only what the store holds already: the checkpoint
    /// where it is and no stamp above the marks (the last page of a pull that found nothing
    /// new). Such a batch opens no transaction: no frame in the WAL, no fsync, nothing for the
    /// next command to read back when it opens the store.
    private func changesNothing() throws -> Bool {
        try store.read { db in
            guard options.observed <= (try MetaRecord.load(db)).remoteMark else { return false }
            guard let checkpoint = options.checkpoint else { return true }
            let stored = try CheckpointRecord.seq(db, peerStore: checkpoint.peerStore, direction: checkpoint.direction)
            return stored == checkpoint.seq
        }
    }

    /// The state an import row that named no version (`IncomingRecord.isLocalEdit`) makes of the
    /// store's row `local`, as `edit` and `delete` make it: only the fields it changes, each on
    /// the store's version of that field; a revival sets them all; a tombstone keeps the fields.
    /// Nil when it changes nothing (equal fields, or a key deleted already). Stamped here, in the
    /// transaction, above every version it has seen: the stamp reserved before may since have been
    /// passed by an edit of the key (another process, or a versioned record earlier in the batch).
    private func localEdit(_ db: Database, _ row: Item, local: ItemRecord, clock: inout ChangeClock) throws
        -> ItemMergeState?
    {
        guard !(row.deleted && local.deleted) else { return nil }
        var item = row
        item.version = Version(stamp: clock.nextLocalStamp(), origin: store.nodeID)
        let state =
            item.deleted
            ? try Store.locallyDeleted(db, local, at: item.version)
            : try Store.locallyEdited(db, local, item: item, edit: FieldEdit(from: try local.item(), to: item))
        return state.version == item.version ? state : nil
    }

    /// Inserts `item` as a new row; false, with nothing written and its sequence number given
    /// back, when the store has a row for the key.
    private static func insertIfAbsent(
        _ db: Database, _ item: Item, fields: Data?, with insertion: borrowing RawStatement, clock: inout ChangeClock
    ) throws -> Bool {
        let seq = clock.nextSeq()
        do {
            let row = ItemRecord(item, seq: seq, fields: fields)
            try row.write(with: insertion)
            try row.writeFields(db, previousHadFields: false)
            return true
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            clock.returnSeq(seq)
            return false
        }
    }

    /// Whether two versions show the same item (a join that only added a conflict leaves the
    /// trash alone).
    private static func sameContents(_ one: Item, _ other: Item) -> Bool {
        one.deleted == other.deleted && one.name == other.name && one.serialNumber == other.serialNumber
            && one.valueInDollars == other.valueInDollars
            && one.dateCreatedMilliseconds == other.dateCreatedMilliseconds && one.image == other.image
    }

    /// Checks what every record must respect, whatever the local state.
    private func validate(_ record: IncomingRecord) throws {
        let item = record.item
        guard !item.deleted else { return }
        do {
            try Store.validate(
                name: item.name, serial: item.serialNumber, value: item.valueInDollars, requireName: false)
        } catch {
            throw StoreError.invalidRecord(item.key, reason: "\(error)")
        }
        if let ref = item.image, ref.size < 0 || ref.size > store.configuration.maxImageBytes {
            throw StoreError.invalidRecord(item.key, reason: "its image size \(ref.size) is out of bounds")
        }
        if let staged = record.image, staged.ref != item.image {
            throw StoreError.invalidRecord(item.key, reason: "the staged image does not match the record's image")
        }
    }
}

extension Store {
    /// Applies `records` and the checkpoint in one transaction: each record whose version beats
    /// the local one (greater `(stamp, origin)`) replaces it with this store's next seq; records
    /// stamped too far in the future are refused and listed; the rest are skipped. Images are
    /// renamed into place after the commit. On a thrown error nothing is applied and the staged
    /// temporaries are removed (`RemoteApply`).
    ///
    /// A key this store has no row for counts, once it has collected tombstones, as a tombstone
    /// at its GC horizon (see `GCHorizon`): an older version loses. `reconcile` is the page's
    /// part in a full reconciliation, committed in the same transaction.
    ///
    /// `keepReplaced` says whether the live versions this batch deletes or overwrites go to the
    /// trash (a pull and a push receiver alike): the caller's trash policy, never the store's.
    package func applyRemote(
        _ records: [IncomingRecord], checkpoint: CheckpointUpdate?, reconcile: ReconcileStep? = nil,
        keepReplaced: Bool = false, observed: VersionStamp = .zero, declined: ClosedRange<VersionStamp>? = nil
    ) throws -> ApplyOutcome {
        try RemoteApply(
            store: self, records: records,
            options: RemoteApply.Options(
                checkpoint: checkpoint, reconcile: reconcile, keepReplaced: keepReplaced, observed: observed,
                declined: declined)
        ).run()
    }
}
