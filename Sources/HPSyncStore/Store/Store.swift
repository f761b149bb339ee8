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
    /// Where replaced and deleted versions' images are copied (`TrashInsertion`).
    var trashDirectory: URL { directory.appendingPathComponent("trash", isDirectory: true) }
    /// Temporaries for incoming images, made ahead during a bulk apply.
    let temporaries: TemporaryFilePool
    private let currentNodeID: Locked<NodeID>
    /// The writer's cache size between batches (`writeBatch`): the usual one, a bulk apply's.
    let writerCacheAtRest = Locked(Store.writerCache)

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
}

extension Store {
    /// A value read and replaced from several threads: the node ID a store stamps on local changes
    /// (replaced only when the placeholder gives way to the real identity, `setNodeID`), the size
    /// the writer's cache returns to after a batch.
    final class Locked<Value: Sendable>: @unchecked Sendable {
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
}

/// The node ID a store stamps on its changes and sends in Hello is always its certificate's.
///
/// The meta row keeps a copy (so that a store without an identity still has an origin), and a
/// copy can go stale: an identity folder copied from another store, or restored from a backup,
/// makes `id` (the certificate) and `status` (the copy) disagree, and `serve` would send a Hello
/// whose node ID every client refuses. The certificate is what peers pin, so it wins.
extension Store {
    /// Whether this store is blind (`init --blind`: it holds only sealed entries, `Blind/`).
    package var isBlind: Bool {
        (try? read { db in try Int64.fetchOne(db, sql: "SELECT blind FROM meta WHERE id = 1") }) == 1
    }

    /// Adopts the certificate's node ID when the meta row names another one.
    func followCertificate() throws {
        let certified: NodeID?
        do {
            certified = try NodeIdentity.certificateNodeID(in: directory)
        } catch {
            // An unreadable certificate stops every sync with its own message; `verify` names it.
            logger.warning("cannot read this node's certificate", metadata: ["error": "\(error)"])
            return
        }
        guard let certified, certified != nodeID else { return }
        let previous = nodeID
        do {
            try setNodeID(certified)
        } catch {
            logger.warning("cannot adopt the certificate's node ID", metadata: ["error": "\(error)"])
            return
        }
        logger.warning(
            "this store's node ID now follows identity/cert.pem (the identity was replaced); peers must trust the new ID",
            metadata: ["was": "\(previous)", "now": "\(certified)"])
    }

    /// What is wrong with this node's identity, one line each (empty when there is no identity
    /// folder: such a store cannot sync, and every sync command says so).
    func identityProblems() -> [String] {
        let folder = directory.appendingPathComponent("identity", isDirectory: true)
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        let identity: NodeIdentity
        do {
            identity = try NodeIdentity.load(from: directory)
        } catch {
            return ["identity: \(error)"]
        }
        guard identity.nodeID == nodeID else {
            return [
                "identity: the store's node ID \(nodeID) is not its certificate's \(identity.nodeID); "
                    + "run `hp-sync status` as the store's owner to adopt the certificate's"
            ]
        }
        return []
    }
}
