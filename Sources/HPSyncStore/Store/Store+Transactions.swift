import Foundation
import GRDB

/// The store's transactions: each maps database errors to `StoreError`.
extension Store {
    /// Runs `body` in one IMMEDIATE write transaction, mapping database errors to `StoreError`.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try wrap { try database.write(body) }
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
