import Foundation
import GRDB
import HPSyncModel

// Version 5: a received record joins the store's state field by field (Protocol.md 5.9).
extension RemoteApply {
    /// A join to write: the state and its stored form.
    struct Join {
        var state: ItemMergeState
        var stored: StoredMergeState
    }

    /// The join of `record` (whose item, a tombstone in its plain form, is `item`) with the
    /// store's row `local`; nil when it holds nothing the row does not. `received` is the
    /// record's own state as stored, when it has one.
    static func join(
        _ db: Database, _ record: IncomingRecord, _ item: Item, local: ItemRecord, received: StoredMergeState?
    ) throws -> Join? {
        let incoming = record.mergeState ?? ItemMergeState(record: item)
        if let received, local.fields == nil, !local.deleted, !record.item.joined,
            incoming.absorbs(wholeRecord: try local.item())
        {
            // The store's item is a whole record that the received state absorbs (most of an
            // incremental pull): the join is that state, unflagged (its own record vouches for
            // it), stored as received.
            return Join(state: incoming, stored: received)
        }
        let held = try Store.mergeState(db, local)
        let joined: ItemMergeState
        do { joined = try held.joined(with: incoming) } catch {
            throw StoreError.invalidRecord(item.key, reason: "\(error)")
        }
        let flag = joined.isJoined(from: [(held, local.joined), (incoming, record.item.joined)])
        guard joined != held else {
            // Nothing new, but an unflagged record may vouch for what this store flagged: the
            // flag goes, in place (it does not travel by itself).
            if local.joined, !flag { try clearJoined(db, local) }
            return nil
        }
        return Join(state: joined, stored: StoredMergeState(joined, joined: flag))
    }

    /// Keeps in the trash folder, before any file is replaced, the photos the join `joined`
    /// (showing `item`) keeps without showing: one that loses a clash here (the store's own or
    /// the record's, staged as `temp`), for the conflicts view; and the live photo a tombstone
    /// deletes while keeping it, for a revival (as a local delete does).
    func keepPhotos(
        of joined: ItemMergeState, item: Item, record: IncomingRecord, local: ItemRecord, temp: String?,
        in trash: inout TrashInsertion
    ) {
        func losing(_ ref: ImageRef) -> Bool {
            item.image != ref && joined.photo.conflicts.contains(where: { $0.value == ref })
        }
        if !local.deleted, let mine = local.imageRef, losing(mine) {
            trash.addImage(source: store.images.finalPath(item.key), ref: mine)
        }
        if let theirs = record.item.image, let temp, losing(theirs) {
            trash.addImage(source: store.images.tempPath(temp), ref: theirs)
        }
        if item.deleted, !local.deleted {
            trash.addPhoto(local.imageRef, at: store.images.finalPath(item.key), keptBy: joined)
        }
    }

    private static func clearJoined(_ db: Database, _ row: ItemRecord) throws {
        guard row.joined, let fields = row.fields.map(StoredMergeState.clearingJoined) else { return }
        try db.execute(sql: "UPDATE itemFields SET fields = ? WHERE key = ?", arguments: [fields, row.key])
    }
}
