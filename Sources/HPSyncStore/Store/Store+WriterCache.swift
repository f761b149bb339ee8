import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// The writer connection's settings: its page cache and WAL limit, normal and during a bulk apply.
extension Store {
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
}

/// Node IDs decoded from `origin` blobs, memoised: a store has few origins and many rows.
struct OriginCache {
    private var nodes: [Data: NodeID] = [:]

    mutating func node(_ bytes: Data, key: String) throws -> NodeID {
        if let node = nodes[bytes] { return node }
        guard let node = NodeID(bytes: bytes) else {
            throw StoreError.database("row \(key) has a malformed origin; run `hp-sync verify`")
        }
        nodes[bytes] = node
        return node
    }
}
