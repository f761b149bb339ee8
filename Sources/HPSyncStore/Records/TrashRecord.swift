import Foundation
import GRDB

/// One row of `trash`: a version of an item that a pull deleted or overwrote.
struct TrashRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "trash"

    enum Columns {
        static let id = Column("id")
        static let key = Column("key")
        static let imageDigest = Column("imageDigest")
        static let trashedAt = Column("trashedAt")
    }

    var id: Int64?
    var key: String
    var name: String
    var serialNumber: String?
    var valueInDollars: Int64
    var dateCreated: Int64
    var imageDigest: Data?
    var imageSize: Int64?
    var stamp: Int64
    var origin: Data
    var reason: String
    var trashedAt: Int64

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    /// The columns a trash row is inserted with (all but `id`), in the order `bind` binds them.
    static let insertedColumns =
        "key, name, serialNumber, valueInDollars, dateCreated, imageDigest, imageSize, stamp, origin, reason, trashedAt"
    static let insertedColumnCount: Int32 = 11

    /// An INSERT of `rows` rows (`TrashInsertion`).
    static func insertion(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: Int(insertedColumnCount)).joined(separator: ",") + ")"
        return "INSERT INTO trash (\(insertedColumns)) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ",")
    }

    /// Binds the row (its `id` unset) to `statement` from parameter `first` on.
    func bind(to statement: borrowing RawStatement, from first: Int32) {
        statement.bind(key, at: first)
        statement.bind(name, at: first + 1)
        statement.bind(serialNumber, at: first + 2)
        statement.bind(valueInDollars, at: first + 3)
        statement.bind(dateCreated, at: first + 4)
        statement.bind(imageDigest, at: first + 5)
        statement.bind(imageSize, at: first + 6)
        statement.bind(stamp, at: first + 7)
        statement.bind(origin, at: first + 8)
        statement.bind(reason, at: first + 9)
        statement.bind(trashedAt, at: first + 10)
    }
}
