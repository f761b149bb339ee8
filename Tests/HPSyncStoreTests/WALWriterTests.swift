import CHPSyncWALWriter
import Foundation
import GRDB
import HPSyncTesting
import Testing

@testable import HPSyncStore

/// Issue 18: the WAL writer (CHPSyncWALWriter) gathers SQLite's two writes per WAL frame into
/// writes of up to 64 KiB. It must keep what other connections and a reopened database see.
@Suite struct WALWriterTests {
    /// A WAL database with a table of blobs, its writer's cache `cachePages` pages (a small one
    /// makes SQLite spill frames before the commit and overwrite them in place), registered as
    /// the store registers it.
    private func makePool(_ dir: TempDirectory, synchronous: String, cachePages: Int) throws -> DatabasePool {
        #expect(Store.walWriterRegistered)
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = \(cachePages)") }
        }
        let pool = try DatabasePool(path: dir.url.appendingPathComponent("t.sqlite").path, configuration: configuration)
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        try pool.write { try $0.execute(sql: "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)") }
        return pool
    }

    private func counts(_ db: Database) -> hp_wal_writer_counts? {
        var counts = hp_wal_writer_counts()
        return hp_wal_writer_counts_of(db.sqliteConnection, &counts) == SQLITE_OK ? counts : nil
    }

    private func blob(_ key: Int, _ round: Int) -> Data {
        Data((0..<700).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ key &* 7 &+ round &* 13) })
    }

    @Test func aCommitOfManyPagesIsWrittenInFewWrites() throws {
        let dir = TempDirectory()
        let pool = try makePool(dir, synchronous: "FULL", cachePages: 2000)
        let (before, after) = try pool.write { db -> (hp_wal_writer_counts?, hp_wal_writer_counts?) in
            let before = counts(db)
            for key in 0..<1500 {
                try db.execute(
                    sql: "INSERT INTO t (k, v) VALUES (?, ?)", arguments: [key * 7919 % 100_003, blob(key, 0)])
            }
            return (before, counts(db))
        }
        let committed = try pool.writeWithoutTransaction { counts($0) }
        let start = try #require(before ?? after)
        let end = try #require(committed)
        let requested = end.requested - start.requested
        let issued = end.issued - start.issued
        // ~280 pages, two writes each, gathered 15 frames to a write (and the commit frame apart).
        #expect(requested > 400, "\(requested) writes asked for")
        #expect(issued * 8 < requested, "\(issued) writes made for \(requested) asked for")
    }

    /// Every commit is in the file when another connection (as another process would) looks,
    /// whether SQLite syncs it (FULL) or not (NORMAL, where only the writer's own flush puts it
    /// there), with frames spilled before the commit and overwritten in place.
    @Test(arguments: ["NORMAL", "FULL"])
    func anotherConnectionSeesEveryCommitAtOnce(synchronous: String) throws {
        let dir = TempDirectory()
        let pool = try makePool(dir, synchronous: synchronous, cachePages: 12)
        let other = try DatabaseQueue(path: dir.url.appendingPathComponent("t.sqlite").path)
        var expected: [Int: Data] = [:]
        for round in 0..<24 {
            let keys = (0..<(round % 6 == 5 ? 400 : 3 + round * 5)).map { ($0 * 7919 + round * 104_729) % 1_000 }
            try pool.write { db in
                for key in keys {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)", arguments: [key, blob(key, round)])
                    expected[key] = blob(key, round)
                }
                // Change the first pages again after the cache spilled them: SQLite overwrites
                // their frames in place and rewrites the checksums at commit.
                for key in keys.prefix(3) {
                    try db.execute(sql: "UPDATE t SET v = ? WHERE k = ?", arguments: [blob(key, round + 100), key])
                    expected[key] = blob(key, round + 100)
                }
            }
            let seen = try other.read { db in
                try Dictionary(
                    uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT k, v FROM t").map {
                        (($0["k"] as Int), ($0["v"] as Data))
                    })
            }
            #expect(seen == expected, "round \(round): \(seen.count) rows seen, \(expected.count) written")
            if seen != expected { return }
        }
        #expect(try other.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
    }

    @Test func aReopenedDatabaseHasEveryCommit() throws {
        let dir = TempDirectory()
        var expected = 0
        do {
            let pool = try makePool(dir, synchronous: "NORMAL", cachePages: 12)
            for round in 0..<10 {
                try pool.write { db in
                    for key in 0..<(50 * (round + 1)) {
                        try db.execute(
                            sql: "INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)", arguments: [key, blob(key, round)])
                    }
                }
                expected = 50 * (round + 1)
            }
        }
        let reopened = try DatabaseQueue(path: dir.url.appendingPathComponent("t.sqlite").path)
        #expect(try reopened.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") } == expected)
        #expect(try reopened.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
    }
    /// A commit SQLite does not sync (NORMAL) that fills the disk fails as it would without the
    /// writer (the writer's own write of the commit returns the error, so SQLite rolls back), and
    /// every earlier commit stays readable by another connection.
    @Test(.enabled(if: SmallDisk.canMount, "cannot mount a tmpfs here (needs root and mount(8))"))
    func aCommitThatFillsTheDiskFailsAndKeepsTheEarlierOnes() throws {
        let dir = TempDirectory()
        try SmallDisk.mount(dir.url, size: "1m")
        defer { SmallDisk.unmount(dir.url) }
        var committed = 0
        var failure: (any Error)?
        do {
            let pool = try makePool(dir, synchronous: "NORMAL", cachePages: 2000)
            for round in 0..<400 {
                do {
                    try pool.write { db in
                        for key in (round * 40)..<((round + 1) * 40) {
                            try db.execute(
                                sql: "INSERT INTO t (k, v) VALUES (?, ?)", arguments: [key, blob(key, round)])
                        }
                    }
                    committed = (round + 1) * 40
                } catch {
                    failure = error
                    break
                }
            }
        }
        let error = try #require(failure as? DatabaseError, "the disk never filled")
        #expect(error.resultCode == .SQLITE_FULL, "\(error)")
        #expect(committed > 0)
        let other = try DatabaseQueue(path: dir.url.appendingPathComponent("t.sqlite").path)
        #expect(try other.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") } == committed)
        #expect(try other.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
    }
}
