import Foundation
import GRDB

/// One row of `pendingImage`: the journal entry of an image committed but not yet renamed into
/// place. `Store.open` and `verify --repair` roll these forward.
struct PendingImageRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "pendingImage"

    enum Columns {
        static let key = Column("key")
        static let tempName = Column("tempName")
    }

    var key: String
    var tempName: String
}
