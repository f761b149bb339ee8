import HPSyncModel
import HPSyncProtocol
import HPSyncStore

// Version 5: the sink joins item states field by field (Protocol.md 5.9).
extension SinkStateMachine {
    /// Whether this session merges fields: both ends speak version 5.
    var mergesFields: Bool { configuration.version >= ProtocolLimits.fieldMergeVersion }

    /// The record to apply for `item`: joined with the store's state in a version-5 session
    /// (a whole record joins as one whose fields are all at its version), else applied when
    /// newer, as before.
    func incomingRecord(_ item: Item, _ image: StagedImage?) -> IncomingRecord {
        var record = IncomingRecord(item: item, image: image)
        if mergesFields {
            record.joinsFields = true
            record.mergeState = item.mergeState
        }
        return record
    }

    /// Notes the photo each winning tombstone's join needs bytes of (`tombstonePhoto`), so
    /// that they are fetched with the page's images.
    func noteTombstonePhotos(_ work: inout PageWork) {
        guard mergesFields else { return }
        for item in work.winners where item.deleted {
            if let photo = Self.tombstonePhoto(item, local: work.local[item.key]) {
                work.tombstonePhotos[item.key] = photo
            }
        }
    }

    /// The photo whose bytes the join of tombstone `item` with `local` (the store's item, if
    /// any) needs and this store may lack (Protocol.md 5.9 "A tombstone's photo"): the photo
    /// the join shows when a newer edit here keeps the item alive, or the photo the resulting
    /// tombstone keeps, for a later revival. Nil when that is `local`'s live photo (the apply
    /// keeps that file) or there is none. Only a tombstone that keeps fields has a photo; the
    /// join is computed for tombstones only, not on the common path.
    static func tombstonePhoto(_ item: Item, local: Item?) -> ImageRef? {
        guard item.deleted, let incoming = item.mergeState else { return nil }
        var joined = incoming
        if let local {
            guard let join = try? (local.mergeState ?? ItemMergeState(record: local)).joined(with: incoming) else {
                return nil
            }
            joined = join
        }
        guard let photo = joined.photo.winner?.value, local.map({ $0.deleted || $0.image != photo }) ?? true
        else { return nil }
        return photo
    }
}

extension SinkStateMachine.PageWork {
    /// The photo a winning record brings: its own, or the one its tombstone's join needs.
    func photo(of item: Item) -> ImageRef? {
        item.deleted ? tombstonePhotos[item.key] : item.image
    }
}
