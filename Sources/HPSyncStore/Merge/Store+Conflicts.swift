import Foundation
import GRDB
import HPSyncModel

/// Resolving a conflict by taking the value that lost: an edit of the field like any other,
/// which resolves the clash here and, after their next syncs, on every node.
extension Store {
    /// Sets `field` of `key` to the losing value of its open conflict made at `losing`.
    /// Throws `unknownKey` when no such conflict is open (resolved meanwhile, say), and
    /// `missingImageFile` for a photo whose bytes this store does not hold.
    package func takeLosingValue(_ key: ItemKey, field: ItemField, losing: Version) throws -> Item {
        guard
            let conflict = try mergeState(key)?.conflicts.first(where: {
                $0.field == field && $0.losingVersion == losing
            })
        else { throw StoreError.unknownKey("\(key.rawValue): no open \(field.rawValue) conflict made at \(losing)") }
        switch conflict.losing {
        case .text(let name): return try edit(key, ItemEdit(name: name))
        case .optionalText(let serial): return try edit(key, ItemEdit(serialNumber: serial.map { .set($0) } ?? .clear))
        case .integer(let value) where field == .valueInDollars: return try edit(key, ItemEdit(valueInDollars: value))
        case .integer(let value): return try setDateCreated(key, value)
        case .photo(nil): return try removeImage(key)
        case .photo(let ref?):
            guard let file = try conflictPhotoFile(ref.digest) else {
                throw StoreError.missingImageFile(path: trashImages.path(ref.digest))
            }
            return try setImage(key, from: file)
        }
    }

    /// Sets an item's creation date (milliseconds since 1970), as a local edit of that field.
    func setDateCreated(_ key: ItemKey, _ milliseconds: Int64) throws -> Item {
        try commitLocal(key: key, image: nil, fields: FieldEdit(dateCreated: milliseconds)) { db, clock in
            var item = try Self.liveItem(db, key)
            item.dateCreatedMilliseconds = milliseconds
            item.version = Version(stamp: clock.nextLocalStamp(replacing: item.version.stamp), origin: nodeID)
            return item
        }
    }
}
