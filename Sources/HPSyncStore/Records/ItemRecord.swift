import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

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
        static let fields = Column("fields")
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
    /// What the row cannot say of the item's merge state (`StoredMergeState`); nil for an item
    /// that is one whole record. The bytes live in `itemFields`: the row's own `fields` column
    /// holds only the integer 1 as a marker (SQLite stores 0 and 1 with no payload byte, so an
    /// edit that gains field versions does not grow its row and split a full page), and every
    /// read selects them through `selection`.
    var fields: Data?

    init(_ item: Item, seq: Int64, fields: Data? = nil) {
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
        self.fields = fields
    }

    /// Decodes by column index: the hot path of pulls and imports (faster than `Decodable`).
    /// Requires `SELECT \(ItemRecord.selection)` (the table's columns, `fields` read through).
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
        fields = row[11]
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

    /// Inserts the row for this key, or updates it in place, through one cached statement bound
    /// directly (the hot path of imports and pulls). An upsert, not `INSERT OR REPLACE`: that
    /// deletes the old row and inserts one with a new rowid, which rewrites a random leaf of the
    /// key index too, about one more page per edited key in the WAL.
    func write(_ db: Database) throws {
        try write(with: RawStatement(db, sql: Self.upsert))
        try writeFields(db, previousHadFields: true)
    }

    /// Like `write(_:)`, through the statement of `upsert` that the caller prepared once for
    /// many rows: finding GRDB's cached statement by its SQL text hashes that text, every row.
    func write(with statement: borrowing RawStatement) throws {
        statement.bind(key, at: 1)
        statement.bind(name, at: 2)
        statement.bind(serialNumber, at: 3)
        statement.bind(valueInDollars, at: 4)
        statement.bind(dateCreated, at: 5)
        statement.bind(imageDigest, at: 6)
        statement.bind(imageSize, at: 7)
        statement.bind(stamp, at: 8)
        statement.bind(origin, at: 9)
        statement.bind(deleted ? 1 : 0, at: 10)
        statement.bind(seq, at: 11)
        statement.bind(fields == nil ? nil : Int64(1), at: 12)
        _ = try statement.step()
        statement.reset()
    }

    /// Writes this row's `fields` into `itemFields` after the row itself: the bytes when it has
    /// them, else removes what an earlier version of the key kept there (only looked for when
    /// `previousHadFields`, so a whole record costs no lookup).
    func writeFields(_ db: Database, previousHadFields: Bool) throws {
        if let fields {
            try db.cachedStatement(sql: Self.fieldsUpsert).execute(arguments: [key, fields])
        } else if previousHadFields {
            try db.cachedStatement(sql: "DELETE FROM itemFields WHERE key = ?").execute(arguments: [key])
        }
    }

    static let fieldsUpsert = """
        INSERT INTO itemFields (key, fields) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET fields = excluded.fields
        """

    /// The columns every read of `item` selects, in the table's order: the row's, and in place
    /// of its `fields` marker the bytes `itemFields` keeps for it (looked up only where the
    /// marker is set).
    static let selection = """
        key, name, serialNumber, valueInDollars, dateCreated, imageDigest, imageSize, stamp, origin, deleted, seq,
          CASE WHEN fields IS NULL THEN NULL ELSE (SELECT f.fields FROM itemFields f WHERE f.key = item.key) END
        """

    /// Inserts the row through `statement` (an `INSERT ... ON CONFLICT DO NOTHING` with this
    /// type's twelve parameters); true when it went in, false when the statement declined it.
    func insert(with statement: borrowing RawStatement, _ db: Database) throws -> Bool {
        try write(with: statement)
        return db.changesCount > 0
    }

    /// The statement `write(_:)` runs.
    /// Inserts a row whose key the store should not have; fails on a key it has (`upsert`'s
    /// conflict clause left out).
    static let insertion = """
        INSERT INTO item (key, name, serialNumber, valueInDollars, dateCreated, imageDigest,
          imageSize, stamp, origin, deleted, seq, fields) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)
        """

    static let upsert = """
        INSERT INTO item (key, name, serialNumber, valueInDollars, dateCreated, imageDigest,
          imageSize, stamp, origin, deleted, seq, fields) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)
        ON CONFLICT(key) DO UPDATE SET name = excluded.name, serialNumber = excluded.serialNumber,
          valueInDollars = excluded.valueInDollars, dateCreated = excluded.dateCreated,
          imageDigest = excluded.imageDigest, imageSize = excluded.imageSize, stamp = excluded.stamp,
          origin = excluded.origin, deleted = excluded.deleted, seq = excluded.seq, fields = excluded.fields
        """

    /// Rewrites the row of a key the store has (the same twelve parameters): what `upsert` does
    /// for such a key, without first trying an insert that conflicts.
    static let update = """
        UPDATE item SET name = ?2, serialNumber = ?3, valueInDollars = ?4, dateCreated = ?5,
          imageDigest = ?6, imageSize = ?7, stamp = ?8, origin = ?9, deleted = ?10, seq = ?11, fields = ?12
          WHERE key = ?1
        """

    /// The rows of `keys`, by one lookup each through a cached statement read directly (cheaper
    /// than `IN (...)` lists, whose keys SQLite first sorts into a temporary index).
    ///
    /// The table is sized on the first row found, not before: a pull into an empty store looks
    /// up 20,000 keys a batch and finds none, and a table reserved for them all (about 5 MB of
    /// buckets) would be allocated and freed for nothing.
    static func fetchMany(_ db: Database, keys: some Collection<ItemKey>) throws -> [String: ItemRecord] {
        var result: [String: ItemRecord] = [:]
        let statement = try RawStatement(db, sql: lookup)
        for key in keys {
            statement.bind(key.rawValue, at: 1)
            if try statement.step() {
                if result.isEmpty { result.reserveCapacity(keys.count) }
                let record = ItemRecord(statement)
                result[record.key] = record
            }
            statement.reset()
        }
        return result
    }

    /// The statement `fetch(with:key:)` runs (the lookup of `fetchMany`).
    static let lookup = "SELECT \(selection) FROM item WHERE key = ?1 -- one key"

    /// The row of `key` through `statement`, prepared once from `lookup` for many keys.
    static func fetch(with statement: borrowing RawStatement, key: ItemKey) throws -> ItemRecord? {
        statement.bind(key.rawValue, at: 1)
        defer { statement.reset() }
        return try statement.step() ? ItemRecord(statement) : nil
    }

    /// Up to `limit` rows with seq greater than `seq`, in ascending seq.
    static func fetchFeed(_ db: Database, after seq: Int64, limit: Int) throws -> [ItemRecord] {
        let statement = try RawStatement(db, sql: "SELECT \(selection) FROM item WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        statement.bind(seq, at: 1)
        statement.bind(Int64(limit), at: 2)
        var rows: [ItemRecord] = []
        rows.reserveCapacity(min(limit, 10_000))
        while try statement.step() { rows.append(ItemRecord(statement)) }
        return rows
    }

    /// Decodes the current row of a `SELECT \(selection)`.
    private init(_ row: borrowing RawStatement) {
        key = row.text(0)
        name = row.text(1)
        serialNumber = row.optionalText(2)
        valueInDollars = row.int64(3)
        dateCreated = row.int64(4)
        imageDigest = row.optionalBlob(5)
        imageSize = row.optionalInt64(6)
        stamp = row.int64(7)
        origin = row.optionalBlob(8) ?? Data()
        deleted = row.int64(9) != 0
        seq = row.int64(10)
        fields = row.optionalBlob(11)
    }

    /// The current row for `key` (the lookup `fetchMany` makes).
    static func fetch(_ db: Database, key: ItemKey) throws -> ItemRecord? {
        try fetchMany(db, keys: CollectionOfOne(key))[key.rawValue]
    }
}
