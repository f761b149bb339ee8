import Foundation
import GRDB
import HPSyncModel

/// Writes one transaction's trash rows, many per INSERT: a pull trashes a version for every
/// live item it replaces, and a single-row INSERT paid the statement's start and end (with
/// AUTOINCREMENT's read and write of `sqlite_sequence`) for each row. Rows wait here until
/// they fill a statement; `finish()`, before the transaction commits, writes the rest. Rows
/// are written in the order they came, so their ids are what one INSERT each gave them. The
/// images the rows name are copied into the trash by `finish()` too (`TrashImages`).
struct TrashInsertion: ~Copyable {
    static let rowsPerStatement = 32

    private let db: Database
    private var pending: [TrashRecord] = []
    private var images = PendingTrashImages()

    init(_ db: Database) {
        self.db = db
    }

    mutating func add(_ record: TrashRecord) throws {
        if pending.isEmpty { pending.reserveCapacity(Self.rowsPerStatement) }
        pending.append(record)
        if pending.count == Self.rowsPerStatement { try write() }
    }

    /// Keeps a copy of the image at `source` (a live file) in the `trash` folder.
    mutating func addImage(source: String, ref: ImageRef, trash: URL) {
        images.add(source: source, ref: ref, trash: trash)
    }

    /// Writes the rows still waiting, and copies their images into the trash, durable before
    /// the caller commits.
    mutating func finish() throws {
        if !pending.isEmpty { try write() }
        try images.write()
    }

    private mutating func write() throws {
        let statement = try RawStatement(db, sql: TrashRecord.insertion(rows: pending.count))
        for (row, record) in pending.enumerated() {
            record.bind(to: statement, from: Int32(row) * TrashRecord.insertedColumnCount + 1)
        }
        _ = try statement.step()
        pending.removeAll(keepingCapacity: true)
    }
}
