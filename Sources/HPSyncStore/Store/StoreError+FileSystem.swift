import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turning failed system and SQLite calls into errors a person can act on: a full disk and a
/// store that cannot be written say so, with the path, and never with SQLite's statement text.
extension StoreError {
    /// The error for a file system call on `path` that failed with `code` (an errno).
    static func fileSystem(path: String, errno code: Int32, doing operation: String? = nil) -> StoreError {
        let reason = (operation.map { "\($0): " } ?? "") + String(cString: strerror(code))
        switch code {
        case ENOSPC, EDQUOT: return .diskFull(path: path, mountPoint: mountPoint(of: path))
        case EROFS, EACCES, EPERM: return .notWritable(path: path, reason: reason)
        default: return .io(path: path, reason: reason)
        }
    }

    /// The error for a failed SQLite call on the store in `directory`.
    ///
    /// SQLite reports a full disk as SQLITE_FULL, but some writes (the WAL index, a checkpoint)
    /// report it as an I/O error; so when the store's file system has no space left, that is
    /// what is said, whatever the code.
    static func database(_ error: DatabaseError, store directory: URL) -> StoreError {
        let file = directory.appendingPathComponent("store.sqlite").path
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: return .busy(error.message ?? "database is locked")
        case .SQLITE_FULL: return .diskFull(path: file, mountPoint: mountPoint(of: directory.path))
        case .SQLITE_READONLY, .SQLITE_PERM:
            return .notWritable(path: file, reason: "the database is read-only (\(error.message ?? "no write access"))")
        default: break
        }
        if isFull(directory.path) { return .diskFull(path: file, mountPoint: mountPoint(of: directory.path)) }
        if error.resultCode == .SQLITE_IOERR || error.resultCode == .SQLITE_CANTOPEN {
            if access(directory.path, W_OK) != 0 || (access(file, F_OK) == 0 && access(file, W_OK) != 0) {
                return .notWritable(path: file, reason: "no write permission, or a read-only file system")
            }
            return .io(path: file, reason: "SQLite error \(error.resultCode.rawValue): \(error.message ?? "I/O error")")
        }
        // No statement text: it means nothing to the person who reads it.
        return .database("SQLite error \(error.resultCode.rawValue): \(error.message ?? "unknown")")
    }

    /// Whether the file system holding `path` has no block left for an unprivileged writer.
    static func isFull(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && info.f_bavail == 0
    }

    /// The mount point of the file system that holds `path` (or its nearest existing parent).
    static func mountPoint(of path: String) -> String {
        var current = URL(fileURLWithPath: path).standardizedFileURL
        var info = stat()
        while stat(current.path, &info) != 0 {
            guard current.path != "/" else { return "/" }
            current.deleteLastPathComponent()
        }
        let device = info.st_dev
        while current.path != "/" {
            let parent = current.deletingLastPathComponent()
            guard stat(parent.path, &info) == 0, info.st_dev == device else { break }
            current = parent
        }
        return current.path
    }
}
