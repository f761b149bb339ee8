import Foundation
import GRDB
import HPSyncCrypto

/// One row of `item`: the current version of a key, live or tombstone.
struct ItemRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"

    enum Columns {
        static let key = Column("key")
        static let name = Column("name")
        static let serialNumber = Column("serialNumber")
        static let valueInDollars = Column("valueInDollars")
        static let dateCreated = Column("dateCreated")
        static let imageDigest = Column("imageDigest")
        static let imageSize = Column("imageSize")
        static let stamp = Column("stamp")
        static let origin = Column("origin")
        static let deleted = Column("deleted")
        static let seq = Column("seq")
    }

    var key: String
    var name: String
    var serialNumber: String?
    var valueInDollars: Int64
    var dateCreated: Int64
    var imageDigest: Data?
    var imageSize: Int64?
    /// The stamp's UInt64 stored as its Int64 bit pattern.
    var stamp: Int64
    var origin: Data
    var deleted: Bool
    var seq: Int64

    init(_ item: Item, seq: Int64) {
        key = item.key.rawValue
        name = item.name
        serialNumber = item.serialNumber
        valueInDollars = item.valueInDollars
        dateCreated = item.dateCreatedMilliseconds
        imageDigest = item.image.map { Data($0.digest.bytes) }
        imageSize = item.image?.size
        stamp = Int64(bitPattern: item.version.stamp.rawValue)
        origin = Data(item.version.origin.bytes)
        deleted = item.deleted
        self.seq = seq
    }

    /// Decodes by column index: the hot path of pulls and imports (faster than `Decodable`).
    /// Requires `SELECT *` in the table's column order.
    init(row: Row) throws {
        key = row[0]
        name = row[1]
        serialNumber = row[2]
        valueInDollars = row[3]
        dateCreated = row[4]
        imageDigest = row[5]
        imageSize = row[6]
        stamp = row[7]
        origin = row[8]
        deleted = row[9]
        seq = row[10]
    }

    var version: Version {
        get throws {
            guard let node = NodeID(bytes: origin) else {
                throw StoreError.database("item \(key) has a malformed origin")
            }
            return Version(stamp: VersionStamp(rawValue: UInt64(bitPattern: stamp)), origin: node)
        }
    }

    var imageRef: ImageRef? {
        guard let imageDigest, let imageSize, let digest = SHA256Digest(bytes: imageDigest) else { return nil }
        return ImageRef(digest: digest, size: imageSize)
    }

    func item() throws -> Item {
        var origins = OriginCache()
        return try item(origins: &origins)
    }

    func item(origins: inout OriginCache) throws -> Item {
        Item(
            key: ItemKey(storedCanonical: key), name: name, serialNumber: serialNumber, valueInDollars: valueInDollars,
            dateCreatedMilliseconds: dateCreated, image: imageRef,
            version: Version(
                stamp: VersionStamp(rawValue: UInt64(bitPattern: stamp)), origin: try origins.node(origin, key: key)),
            deleted: deleted)
    }

    func changeEntry() throws -> ChangeEntry {
        ChangeEntry(key: try ItemKey(key), version: try version, deleted: deleted, seq: seq)
    }

    /// Inserts or replaces the row for this key through one cached statement (the hot path of
    /// imports and pulls).
    func write(_ db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO item (key, name, serialNumber, valueInDollars, dateCreated, imageDigest,
                  imageSize, stamp, origin, deleted, seq) VALUES (?,?,?,?,?,?,?,?,?,?,?)
                """)
        try statement.execute(arguments: [
            key, name, serialNumber, valueInDollars, dateCreated, imageDigest, imageSize, stamp, origin, deleted, seq,
        ])
    }

    /// The rows of `keys` in a few `IN (...)` queries, not one query (and cursor) per key.
    static func fetchMany(_ db: Database, keys: some Collection<ItemKey>) throws -> [String: ItemRecord] {
        var result: [String: ItemRecord] = [:]
        result.reserveCapacity(keys.count)
        let all = Array(keys)
        for start in stride(from: 0, to: all.count, by: 500) {
            let chunk = all[start..<min(start + 500, all.count)]
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let statement = try db.cachedStatement(sql: "SELECT * FROM item WHERE key IN (\(placeholders))")
            let rows = try Row.fetchCursor(statement, arguments: StatementArguments(chunk.map(\.rawValue)))
            while let row = try rows.next() {
                let record = try ItemRecord(row: row)
                result[record.key] = record
            }
        }
        return result
    }

    /// The current row for `key`, through a cached statement.
    static func fetch(_ db: Database, key: ItemKey) throws -> ItemRecord? {
        let statement = try db.cachedStatement(sql: "SELECT * FROM item WHERE key = ?")
        return try ItemRecord.fetchOne(statement, arguments: [key.rawValue])
    }
}
