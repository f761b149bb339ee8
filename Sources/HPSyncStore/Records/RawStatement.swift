import CHPSyncSQLite
import Foundation
import GRDB

/// A cached statement bound, stepped and read through SQLite's C API, for the hot paths where
/// GRDB's `StatementArguments` and `Row` (existentials and a dictionary per row) cost more than
/// SQLite's own work: a pull's item writes and key lookups. Only this type runs the statements
/// it prepares: it resets and clears them after every use, so GRDB's cache may hold them.
struct RawStatement: ~Copyable {
    /// Held, not only its handle: GRDB finalizes a cached statement it drops from its cache (a
    /// schema change, `releaseMemory()`, a failed run of the same SQL), and a bare handle would
    /// then point at freed memory; the statement object keeps it prepared.
    private let statement: Statement
    private var handle: OpaquePointer { statement.sqliteStatement }
    private let db: Database
    private let sql: String

    init(_ db: Database, sql: String) throws {
        self.statement = try db.cachedStatement(sql: sql)
        self.db = db
        self.sql = sql
    }

    deinit {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Binding (1-based indexes, like SQLite's)

    func bind(_ value: String?, at index: Int32) {
        guard let value else { return bindNull(at: index) }
        var text = value
        text.withUTF8 { bytes in
            _ = sqlite3_bind_text(handle, index, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
    }

    func bind(_ value: Int64?, at index: Int32) {
        guard let value else { return bindNull(at: index) }
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ value: Data?, at index: Int32) {
        guard let value else { return bindNull(at: index) }
        value.withUnsafeBytes { bytes in
            _ = sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
    }

    private func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    // MARK: Running

    /// Steps once: true when a row is ready to read, false when the statement is done.
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            sqlite3_reset(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
        }
    }

    /// Makes the statement ready for the next bindings.
    func reset() {
        sqlite3_reset(handle)
    }

    // MARK: Reading the current row (0-based columns)

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func optionalInt64(_ column: Int32) -> Int64? {
        isNull(column) ? nil : int64(column)
    }

    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column's text as SQLite holds it, NUL-terminated, for a use that needs no `String`
    /// (a file name to `stat`); nil for NULL. The pointer is valid only inside `body`.
    func withCString<T>(_ column: Int32, _ body: (UnsafePointer<CChar>) -> T) -> T? {
        guard let bytes = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return bytes.withMemoryRebound(to: CChar.self, capacity: count + 1) { body($0) }
    }

    func optionalText(_ column: Int32) -> String? {
        isNull(column) ? nil : text(column)
    }

    func optionalBlob(_ column: Int32) -> Data? {
        guard !isNull(column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// SQLite copies what it binds with this destructor (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
