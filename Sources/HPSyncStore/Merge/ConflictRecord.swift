import Foundation
import GRDB
import HPSyncModel

/// One row of `conflict`: a value of one field of one item that lost to a concurrent edit and
/// waits until a later edit of the field resolves it (see `ItemMergeState`).
///
/// The value sits in the column of its type: `text` for the name and the serial number (NULL:
/// no serial), `integer` for the value and the creation date, `imageDigest` and `imageSize` for
/// the photo (NULL: no photo).
struct ConflictRecord: Codable, FetchableRecord, PersistableRecord, Hashable {
    static let databaseTableName = "conflict"

    var key: String
    var field: String
    var stamp: Int64
    var origin: Data
    var baseStamp: Int64?
    var baseOrigin: Data?
    var text: String?
    var integer: Int64?
    var imageDigest: Data?
    var imageSize: Int64?

    init(key: ItemKey, listed: ListedCandidate) {
        self.key = key.rawValue
        field = listed.field.rawValue
        stamp = Int64(bitPattern: listed.version.stamp.rawValue)
        origin = Data(listed.version.origin.bytes)
        baseStamp = listed.base.map { Int64(bitPattern: $0.stamp.rawValue) }
        baseOrigin = listed.base.map { Data($0.origin.bytes) }
        switch listed.content {
        case .text(let value): text = value
        case .optionalText(let value): text = value
        case .integer(let value): integer = value
        case .photo(let ref):
            imageDigest = ref.map { Data($0.digest.bytes) }
            imageSize = ref?.size
        }
    }

    /// The row as the wire lists a candidate.
    func listed() throws -> ListedCandidate {
        let field = try itemField
        let content: FieldContent =
            switch field {
            case .name: .text(text ?? "")
            case .serialNumber: .optionalText(text)
            case .valueInDollars, .dateCreated: .integer(integer ?? 0)
            case .photo: .photo(photo)
            }
        return ListedCandidate(field: field, content: content, version: try version, base: try base)
    }

    var itemField: ItemField {
        get throws {
            guard let field = ItemField(rawValue: field) else {
                throw StoreError.database("a conflict of item \(key) names an unknown field \(field)")
            }
            return field
        }
    }

    var version: Version {
        get throws { try Self.version(stamp, origin, key: key) }
    }

    var base: Version? {
        get throws {
            guard let baseStamp, let baseOrigin else { return nil }
            return try Self.version(baseStamp, baseOrigin, key: key)
        }
    }

    var photo: ImageRef? {
        guard let imageDigest, let imageSize, let digest = SHA256Digest(bytes: imageDigest) else { return nil }
        return ImageRef(digest: digest, size: imageSize)
    }

    private static func version(_ stamp: Int64, _ origin: Data, key: String) throws -> Version {
        guard let node = NodeID(bytes: origin) else {
            throw StoreError.database("a conflict of item \(key) has a malformed origin")
        }
        return Version(stamp: VersionStamp(rawValue: UInt64(bitPattern: stamp)), origin: node)
    }

    /// The conflicts of `key`.
    static func fetchAll(_ db: Database, key: ItemKey) throws -> [ConflictRecord] {
        try ConflictRecord.fetchAll(db, sql: "SELECT * FROM conflict WHERE key = ?", arguments: [key.rawValue])
    }

    static func deleteAll(_ db: Database, key: ItemKey) throws {
        try db.execute(sql: "DELETE FROM conflict WHERE key = ?", arguments: [key.rawValue])
    }
}
