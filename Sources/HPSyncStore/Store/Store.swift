import CHPSyncSQLite
import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel
import Logging

/// A node's inventory: items, tombstones and images in one directory, shared safely by every
/// process that opens it (a `serve` daemon and CLI commands).
///
/// Layout: `store.sqlite` (WAL), `images/<KEY>`, `identity/` (owned by the crypto module).
public final class Store: Sendable {
    public let directory: URL
    public let storeID: StoreID
    let configuration: StoreConfiguration
    let clock: any WallClock
    /// The store's logger; the importers above the store log through it too.
    package let logger: Logger
    let database: DatabasePool
    let images: ImageDirectory
    /// Temporaries for incoming images, made ahead during a bulk apply.
    let temporaries: TemporaryFilePool
    private let currentNodeID: Locked<NodeID>
    /// The writer's cache size between batches (`writeBatch`): the usual one, a bulk apply's.
    private let writerCacheAtRest = Locked(Store.writerCache)

    static let databaseName = "store.sqlite"

    private init(
        directory: URL, database: DatabasePool, meta: MetaRecord, configuration: StoreConfiguration,
        clock: any WallClock, logger: Logger
    ) throws {
        guard let storeID = StoreID(bytes: meta.storeID), let nodeID = NodeID(bytes: meta.nodeID) else {
            throw StoreError.database("the meta row is malformed; the store is damaged, restore it from a peer")
        }
        self.directory = directory
        self.storeID = storeID
        self.currentNodeID = Locked(nodeID)
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.database = database
        self.images = ImageDirectory(url: directory.appendingPathComponent("images", isDirectory: true))
        self.temporaries = TemporaryFilePool(directory: images)
    }

    deinit {
        temporaries.stop()
    }

    /// The node ID stamped as origin on local changes.
    public var nodeID: NodeID { currentNodeID.get() }

    /// Creates a new, empty store in `directory` (made if missing); refuses if one exists there.
    public static func create(
        at directory: URL, nodeID: NodeID, configuration: StoreConfiguration = .init(),
        clock: any WallClock = SystemClock(), logger: Logger
    ) throws -> Store {
        let fileManager = FileManager.default
        let databaseURL = directory.appendingPathComponent(databaseName)
        if fileManager.fileExists(atPath: databaseURL.path) { throw StoreError.storeExists(path: directory.path) }
        do {
            try StorePrivacy.makeDirectory(directory.appendingPathComponent("images", isDirectory: true))
        } catch {
            throw StoreError.cannotCreate(path: directory.path, reason: "\(error.localizedDescription)")
        }
        let pool = try openPool(databaseURL, configuration: configuration, createIfMissing: true)
        let meta = try wrap(store: directory) {
            try StoreMigrations.migrator.migrate(pool)
            return try pool.write { db -> MetaRecord in
                if let existing = try MetaRecord.fetchOne(db, key: 1) { return existing }
                let meta = MetaRecord(
                    storeID: Data(StoreID.random().bytes), nodeID: Data(nodeID.bytes), hlcHighWater: 0, lastSeq: 0,
                    schemaVersion: Int64(StoreMigrations.schemaVersion),
                    createdAt: Int64(clock.nowMilliseconds()))
                try meta.insert(db)
                return meta
            }
        }
        // The folder may predate this call (`init` puts the identity there first); the database
        // files SQLite just made take the process umask. From here on, new files inherit 0600.
        StorePrivacy.tighten(directory, always: true)
        logger.info("created store", metadata: ["path": "\(directory.path)"])
        return try Store(
            directory: directory, database: pool, meta: meta, configuration: configuration, clock: clock,
            logger: logger)
    }

    /// Opens the store in `directory`, rolls committed-but-unrenamed images forward and sweeps
    /// stale temporaries and orphans.
    public static func open(
        at directory: URL, configuration: StoreConfiguration = .init(), clock: any WallClock = SystemClock(),
        logger: Logger
    ) throws -> Store {
        let databaseURL = directory.appendingPathComponent(databaseName)
        guard FileManager.default.fileExists(atPath: databaseURL.path) else {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), !isDirectory.boolValue
            {
                throw StoreError.storeIsAFile(path: directory.path)
            }
            throw StoreError.noStore(path: directory.path)
        }
        let tightened = StorePrivacy.tighten(directory)
        if !tightened.isEmpty {
            logger.notice(
                "made the store private to its owner (folders 0700, files 0600)",
                metadata: ["path": "\(directory.path)", "changed": "\(tightened.count)"])
        }
        let pool = try openPool(databaseURL, configuration: configuration, createIfMissing: false)
        let meta = try wrap(store: directory) {
            let migrator = StoreMigrations.migrator
            if try pool.read({ try migrator.hasBeenSuperseded($0) }) {
                throw StoreError.newerSchema("unknown migrations in \(databaseURL.path)")
            }
            try migrator.migrate(pool)
            return try pool.read { try MetaRecord.load($0) }
        }
        try? StorePrivacy.makeDirectory(directory.appendingPathComponent("images", isDirectory: true))
        let store = try Store(
            directory: directory, database: pool, meta: meta, configuration: configuration, clock: clock,
            logger: logger)
        try store.followCertificate()
        try store.rollForwardPendingImages()
        try store.sweepIfDue()
        return store
    }

    private static func openPool(_ url: URL, configuration: StoreConfiguration, createIfMissing: Bool) throws
        -> DatabasePool
    {
        var config = Configuration()
        config.busyMode = .timeout(configuration.busyTimeoutSeconds)
        config.label = "hp-sync store"
        config.prepareDatabase { db in
            // The writer's larger page cache (20 MiB) keeps a batch's random-key index updates in
            // memory until commit instead of spilling pages to the WAL one by one (5x fewer writes
            // on a 100k import; a 100k-item pull writes the same pages with 20 or 32 MiB, and a
            // million-item pull peaks 14 MB lower with 20). Readers keep SQLite's default: a
            // pull's lookups of random keys rarely meet a page twice in one batch, and each commit
            // empties their cache, so a large one bought nothing but memory.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = \(Self.writerCache)") }
            // Closing leaves the WAL for the next open instead of checkpointing it (a write of
            // the changed pages and an fsync of the database, 30-90 ms on a slow disk, on every
            // command); commits are durable in the WAL, and a later commit's automatic
            // checkpoint (past 1,000 pages) folds them into the database file.
            guard hp_sqlite_keep_wal_on_close(db.sqliteConnection) == SQLITE_OK else {
                throw DatabaseError(message: "cannot keep the WAL on close")
            }
        }
        do {
            let pool = try DatabasePool(path: url.path, configuration: config)
            // GRDB sets `synchronous = NORMAL` on the writer when it opens a pool in WAL mode
            // (after `prepareDatabase`), which commits without syncing the WAL. Every commit here
            // is a promise (a checkpoint, an applied page, a pushed batch), so: FULL.
            // A large pull lets the WAL grow to 64 MiB (`bulkApply`); once checkpointed, the next
            // write that rewinds it cuts the file back to 4 MiB instead of keeping it that size.
            try pool.writeWithoutTransaction {
                try $0.execute(
                    sql: "PRAGMA synchronous = FULL; PRAGMA journal_size_limit = 4194304; "
                        + "PRAGMA wal_autocheckpoint = \(configuration.walAutocheckpointPages)")
            }
            return pool
        } catch let error as DatabaseError {
            let directory = url.deletingLastPathComponent()
            let mapped = StoreError.database(error, store: directory)
            guard createIfMissing else {
                if case .database(let reason) = mapped {
                    throw StoreError.database("cannot open \(url.path): \(reason)")
                }
                throw mapped
            }
            switch mapped {
            case .diskFull: throw mapped
            case .notWritable(_, let reason), .io(_, let reason), .database(let reason):
                throw StoreError.cannotCreate(path: url.path, reason: reason)
            default: throw mapped
            }
        }
    }

    /// Replaces the placeholder node ID with the real identity; future changes carry it.
    package func setNodeID(_ id: NodeID) throws {
        try write { db in
            try db.execute(sql: "UPDATE meta SET nodeID = ? WHERE id = 1", arguments: [Data(id.bytes)])
        }
        currentNodeID.set(id)
    }

    /// The path of an item's image file (which exists only when the item has an image).
    public func imageFileURL(for key: ItemKey) -> URL {
        images.url.appendingPathComponent(key.rawValue)
    }

    /// Runs `body` in one IMMEDIATE write transaction, mapping database errors to `StoreError`.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try wrap { try database.write(body) }
    }

    /// The writer's page cache (`PRAGMA cache_size`, negative: KiB), and during a bulk apply.
    static let writerCache = -20480
    static let bulkWriterCache = -4096

    /// Runs a bulk apply (a sync session's sink) with the WAL allowed to grow to 64 MiB before a
    /// commit folds it into the database. Every batch of a large pull rewrites most leaves of
    /// the random-key index; checkpointing after each batch wrote them all into store.sqlite
    /// (and fsynced it) each time. Afterwards the usual limit (`walAutocheckpointPages`) applies
    /// again, and a WAL the session left larger than that is folded and truncated to nothing
    /// there and then: left in place, every later command would first read it whole (SQLite
    /// rebuilds its index of the WAL when a process opens the store).
    ///
    /// The writer's cache shrinks to 4 MiB meanwhile, between batches: a sink hands each batch
    /// in key order, so it meets each leaf once, in order, and a larger cache kept from batch to
    /// batch only holds pages it will not touch again (a million-item pull peaked about 16 MB
    /// higher with 20 MiB, no faster). A batch that rewrites rows the store has takes the full
    /// cache for its own transaction (`useFullWriterCache`): what it dirties stays in memory
    /// until its commit.
    ///
    /// Meanwhile the temporaries for incoming images are created ahead, on a thread of their own
    /// (`TemporaryFilePool`); those not taken are removed at the end.
    package func bulkApply<T>(_ body: () throws -> T) throws -> T {
        try onWriter("PRAGMA wal_autocheckpoint = 16384; PRAGMA cache_size = \(Self.bulkWriterCache)")
        writerCacheAtRest.set(Self.bulkWriterCache)
        temporaries.start()
        defer {
            temporaries.stop()
            writerCacheAtRest.set(Self.writerCache)
            do {
                let fold =
                    walBytes() > configuration.walAutocheckpointPages * 4096 ? "; PRAGMA wal_checkpoint(TRUNCATE)" : ""
                try onWriter(
                    "PRAGMA cache_size = \(Self.writerCache); PRAGMA wal_autocheckpoint = \(configuration.walAutocheckpointPages)"
                        + fold)
            } catch {
                logger.warning("could not restore the writer's settings after a sync", metadata: ["error": "\(error)"])
            }
        }
        return try body()
    }

    /// The size of `store.sqlite-wal`, 0 when there is none.
    private func walBytes() -> Int {
        var info = stat()
        let path = directory.appendingPathComponent(Self.databaseName + "-wal").path
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Runs `sql` (pragmas) on the writer connection, outside any transaction.
    private func onWriter(_ sql: String) throws {
        try wrap { try database.writeWithoutTransaction { try $0.execute(sql: sql) } }
    }

    /// Like `write`, for one batch of a remote apply: inside it the batch may take the
    /// writer's full page cache (`useFullWriterCache`), and the cache goes back to its size at
    /// rest (a bulk apply's smaller one) once the transaction has ended.
    func writeBatch<T>(_ body: (Database) throws -> T) throws -> T {
        try wrap {
            try database.writeWithoutTransaction { db in
                let result = Self.immediateTransaction(db, body)
                try db.execute(sql: "PRAGMA cache_size = \(writerCacheAtRest.get())")
                return try result.get()
            }
        }
    }

    /// Like `read`, on the writer connection with its full page cache, for a read whose pages
    /// the next `writeBatch` reads again: that transaction finds them in the writer's cache
    /// (SQLite keeps a connection's cache while no other connection commits) instead of reading
    /// them from the file a second time. The cache stays full until that batch ends. It waits
    /// for a write in flight, so it is for a caller that has none.
    func readOnWriter<T>(_ body: (Database) throws -> T) throws -> T {
        try wrap {
            try database.writeWithoutTransaction { db in
                try Self.useFullWriterCache(db)
                var value: T?
                try db.inTransaction(.deferred) {
                    value = try body(db)
                    return .commit
                }
                return value!
            }
        }
    }

    /// Gives the rest of a `writeBatch` transaction the writer's full page cache. For a batch
    /// that rewrites rows the store has: each such row costs a leaf of the table and one of the
    /// seq index, read and dirtied, and every dirty page stays until the commit. At M an
    /// incremental pull of 1,110 edits dirtied 1,528 pages, which a bulk apply's 4 MiB cache
    /// (1,024 pages) spilled to the WAL mid-transaction and read back: 7,695 reads and 4,553
    /// writes of pages against 4,324 and 3,071 with the full cache. A batch of new keys in key
    /// order (a first pull) never asks, so its memory stays as before.
    static func useFullWriterCache(_ db: Database) throws {
        try db.execute(sql: "PRAGMA cache_size = \(writerCache)")
    }

    /// Like `write`, for a transaction whose loss in a crash is harmless: it commits without
    /// fsyncing the WAL (`synchronous = NORMAL`); the next durable commit syncs it along.
    func writeWithoutSync<T>(_ body: (Database) throws -> T) throws -> T {
        try wrap {
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                let result = Self.immediateTransaction(db, body)
                try db.execute(sql: "PRAGMA synchronous = FULL")
                return try result.get()
            }
        }
    }

    /// Runs `body` in one IMMEDIATE transaction on a connection the caller holds outside any:
    /// what it returned or threw, once the transaction has committed or rolled back.
    private static func immediateTransaction<T>(_ db: Database, _ body: (Database) throws -> T) -> Result<T, Error> {
        Result {
            var value: T?
            try db.inTransaction(.immediate) {
                value = try body(db)
                return .commit
            }
            return value!
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try wrap { try database.read(body) }
    }

    func wrap<T>(_ body: () throws -> T) throws -> T {
        try Self.wrap(store: directory, body)
    }

    static func wrap<T>(store directory: URL, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw StoreError.database(error, store: directory)
        }
    }
}

/// A value read and replaced from several threads: the node ID a store stamps on local changes
/// (replaced only when the placeholder gives way to the real identity, `setNodeID`), the size
/// the writer's cache returns to after a batch.
private final class Locked<Value: Sendable>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func get() -> Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set(_ newValue: Value) {
        lock.lock()
        defer { lock.unlock() }
        value = newValue
    }
}
