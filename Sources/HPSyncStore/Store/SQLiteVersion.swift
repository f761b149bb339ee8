import CHPSyncSQLite

/// The SQLite library this process runs with (for `hp-sync --version` and bug reports).
package enum SQLiteVersion {
    /// "3.46.1": the library loaded at run time.
    package static var runtime: String { String(cString: sqlite3_libversion()) }
}
