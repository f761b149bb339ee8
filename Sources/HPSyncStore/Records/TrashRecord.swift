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
}
