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

    /// Notes the winning tombstones whose join revives a live item here with a photo it does
    /// not hold (`revivedPhoto`), so that their bytes are fetched with the page's images.
    func noteRevivedPhotos(_ work: inout PageWork) {
        guard mergesFields else { return }
        for item in work.winners where item.deleted {
            if let photo = Self.revivedPhoto(item, local: work.local[item.key]) { work.revivedPhotos[item.key] = photo }
        }
    }

    /// The photo the join of tombstone `item` with the live item `local` shows when it is not
    /// `local`'s own: the tombstone keeps a photo edit this node has not seen, and a newer edit
    /// here keeps the item alive (Protocol.md 5.9 "A tombstone's photo"). Only a tombstone that
    /// keeps fields can bring a photo; a live record names its own.
    static func revivedPhoto(_ item: Item, local: Item?) -> ImageRef? {
        guard item.deleted, let incoming = item.mergeState, let local, !local.deleted else { return nil }
        let held = local.mergeState ?? ItemMergeState(record: local)
        guard let joined = try? held.joined(with: incoming), !joined.isDeleted,
            let photo = joined.photo.winner?.value, photo != local.image
        else { return nil }
        return photo
    }
}

extension SinkStateMachine.PageWork {
    /// The photo a winning record brings: its own, or the one its tombstone's join revives.
    func photo(of item: Item) -> ImageRef? {
        item.deleted ? revivedPhotos[item.key] : item.image
    }
}
