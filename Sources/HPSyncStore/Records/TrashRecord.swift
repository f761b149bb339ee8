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

    /// The statement `insert(with:)` runs.
    static let insertion = """
        INSERT INTO trash (key, name, serialNumber, valueInDollars, dateCreated, imageDigest, imageSize,
          stamp, origin, reason, trashedAt) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)
        """

    /// Inserts the row (its `id` unset) through `statement`, prepared from `insertion`: a pull
    /// trashes a row for every live item it overwrites, and GRDB's record insert cost more than
    /// the write itself.
    func insert(with statement: borrowing RawStatement) throws {
        statement.bind(key, at: 1)
        statement.bind(name, at: 2)
        statement.bind(serialNumber, at: 3)
        statement.bind(valueInDollars, at: 4)
        statement.bind(dateCreated, at: 5)
        statement.bind(imageDigest, at: 6)
        statement.bind(imageSize, at: 7)
        statement.bind(stamp, at: 8)
        statement.bind(origin, at: 9)
        statement.bind(reason, at: 10)
        statement.bind(trashedAt, at: 11)
        _ = try statement.step()
        statement.reset()
    }
}
