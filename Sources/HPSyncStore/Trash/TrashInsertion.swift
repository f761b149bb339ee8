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
    /// Where the live images are, and the trash folder their copies go to.
    private let live: ImageDirectory
    private let trash: URL
    private var pending: [TrashRecord] = []
    private var images = PendingTrashImages()

    init(_ db: Database, images: ImageDirectory, trash: URL) {
        self.db = db
        self.live = images
        self.trash = trash
    }

    /// Keeps a live local version about to be replaced or deleted in the trash, inside the
    /// caller's transaction (`RemoteApply` when the trash policy says so, a local delete with
    /// `keepInTrash`); the caller finishes the insertion before its commit.
    mutating func add(replaced local: ItemRecord, deleted: Bool, now: UInt64) throws {
        if let digest = local.imageDigest.flatMap({ SHA256Digest(bytes: Array($0)) }), let size = local.imageSize {
            // Copied when the insertion finishes; a source missing or damaged then (an image
            // never received, rot) leaves the row without bytes, which `verify` reports.
            images.add(
                source: live.finalPath(ItemKey(storedCanonical: local.key)), ref: ImageRef(digest: digest, size: size),
                trash: trash)
        }
        try add(
            TrashRecord(
                id: nil, key: local.key, name: local.name, serialNumber: local.serialNumber,
                valueInDollars: local.valueInDollars, dateCreated: local.dateCreated, imageDigest: local.imageDigest,
                imageSize: local.imageSize, stamp: local.stamp, origin: local.origin,
                reason: deleted ? TrashEntry.Reason.deleted.rawValue : TrashEntry.Reason.overwritten.rawValue,
                trashedAt: Int64(now)))
    }

    /// Keeps a copy of the image at `source` (a live or staged file) in the trash folder: a
    /// photo that loses a clash stays there for the conflicts view.
    mutating func addImage(source: String, ref: ImageRef) {
        images.add(source: source, ref: ref, trash: trash)
    }

    /// Keeps the live photo `ref` (its file at `path`) when the tombstone `state` keeps it as a
    /// candidate, for a join that revives the item (Protocol.md 5.9 "A tombstone's photo").
    mutating func addPhoto(_ ref: ImageRef?, at path: String, keptBy state: ItemMergeState) {
        guard let ref, state.photo.candidates.contains(where: { $0.value == ref }) else { return }
        addImage(source: path, ref: ref)
    }

    private mutating func add(_ record: TrashRecord) throws {
        if pending.isEmpty { pending.reserveCapacity(Self.rowsPerStatement) }
        pending.append(record)
        if pending.count == Self.rowsPerStatement { try write() }
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
