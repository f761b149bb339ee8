import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol

/// Seals items into blind objects and opens them again, checking everything a blind store
/// could have changed (Protocol.md 5.8): the seal binds the record ID, the stamp and the origin,
/// and the opened record must name the same version and an item key whose record ID is the
/// entry's, so an entry swapped with or replayed under another ID fails; its photo reference
/// must be the one the entry names.
struct BlindRecordSeal {
    let keys: BlindKeys

    /// The record ID of `key`.
    func id(_ key: ItemKey) -> BlindID { BlindID(bytes: keys.recordID(for: key))! }

    /// The sealed photo an item's image is stored as.
    func photo(_ image: ImageRef) -> BlindPhotoRef {
        BlindPhotoRef(
            id: BlindID(bytes: keys.photoID(for: image.digest))!, size: BlindKeys.sealedPhotoSize(plainSize: image.size)
        )
    }

    func seal(_ item: Item) -> BlindObject {
        let entry = BlindEntry(id: id(item.key), version: item.version, photo: item.image.map(photo))
        // The plaintext is the wire's own Record (inside an Envelope), so an outside client reads
        // it with the same schema and validation as any record (Protocol.md 4.5).
        let plaintext = Message.records([item]).serializedEnvelope()
        return BlindObject(entry: entry, sealed: keys.sealRecord(plaintext, context: Self.context(entry)))
    }

    /// The item inside `object`; throws a description of what is wrong.
    func open(_ object: BlindObject) throws -> Item {
        let entry = object.entry
        let plaintext: [UInt8]
        do {
            plaintext = try keys.openRecord(object.sealed, context: Self.context(entry))
        } catch {
            throw Failure("record \(entry.id): \(error)")
        }
        guard case .records(let items) = try? Message(decoding: plaintext), items.count == 1, let item = items.first
        else {
            throw Failure("record \(entry.id) opened but holds no valid record")
        }
        guard item.version == entry.version else {
            throw Failure("record \(entry.id) holds version \(item.version), not the listed \(entry.version)")
        }
        guard id(item.key) == entry.id else {
            throw Failure("record \(entry.id) holds item \(item.key), whose record ID is another (swapped or replayed)")
        }
        guard item.image.map(photo) == entry.photo else {
            throw Failure("record \(entry.id) of item \(item.key) names another photo than its entry")
        }
        return item
    }

    /// What the seal binds besides the record: ID ‖ stamp (8 bytes, big-endian) ‖ origin.
    static func context(_ entry: BlindEntry) -> [UInt8] {
        var bytes = entry.id.bytes
        withUnsafeBytes(of: entry.version.stamp.rawValue.bigEndian) { bytes += $0 }
        bytes += entry.version.origin.bytes
        return bytes
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
