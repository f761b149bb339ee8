import GRDB

/// Writes one transaction's trash rows, many per INSERT: a pull trashes a version for every
/// live item it replaces, and a single-row INSERT paid the statement's start and end (with
/// AUTOINCREMENT's read and write of `sqlite_sequence`) for each row. Rows wait here until
/// they fill a statement; `finish()`, before the transaction commits, writes the rest. Rows
/// are written in the order they came, so their ids are what one INSERT each gave them.
///
/// It also makes the photos linked into `trash/` durable before the rows naming them commit:
/// a power cut after the commit must not leave a row whose photo's name was never synced (the
/// power-cut test found exactly that: an acknowledged pull's trashed photo gone, its live file
/// already replaced, so `trash restore` had nothing to restore).
struct TrashInsertion: ~Copyable {
    static let rowsPerStatement = 32

    private let db: Database
    private var pending: [TrashRecord] = []
    /// The folder a photo was linked into since the last sync of it.
    private var unsyncedFolder: String?

    init(_ db: Database) {
        self.db = db
    }

    mutating func add(_ record: TrashRecord) throws {
        if pending.isEmpty { pending.reserveCapacity(Self.rowsPerStatement) }
        pending.append(record)
        if pending.count == Self.rowsPerStatement { try write() }
    }

    /// Notes that a photo was linked into `folder`: `finish()` syncs it.
    mutating func linked(into folder: String) {
        unsyncedFolder = folder
    }

    /// Writes the rows still waiting and syncs the trash folder's new names (before the commit).
    mutating func finish() throws {
        if !pending.isEmpty { try write() }
        if let folder = unsyncedFolder {
            try FileIO.syncDirectory(folder)
            unsyncedFolder = nil
        }
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
