import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store's run lock: at most one pull, push or sync per store at a time.
///
/// An advisory `flock` on `<store>/sync.lock`, taken without waiting and held until `release()` or
/// until the process exits (the kernel drops it even after `kill -9`, so a crashed run never
/// leaves a stale lock). The holder writes its PID into the file so the next run can name it.
/// `serve` and local commands do not take it: SQLite already serializes their writes.
package final class SyncLock {
    package static let fileName = "sync.lock"

    private var descriptor: Int32
    package let url: URL

    private init(descriptor: Int32, url: URL) {
        self.descriptor = descriptor
        self.url = url
    }

    deinit { release() }

    /// Takes the lock of the store in `directory`, or throws `SyncLockError.held` at once.
    package static func acquire(storeDirectory directory: URL) throws -> SyncLock {
        let url = directory.appendingPathComponent(fileName)
        let fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SyncLockError.cannotOpen(path: url.path, reason: String(cString: strerror(errno)))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = readPID(fd)
            close(fd)
            guard code == EWOULDBLOCK else {
                throw SyncLockError.cannotOpen(path: url.path, reason: String(cString: strerror(code)))
            }
            throw SyncLockError.held(path: url.path, pid: holder)
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return SyncLock(descriptor: fd, url: url)
    }

    /// Releases the lock (idempotent). The file stays: unlinking it would race with a new holder.
    package func release() {
        guard descriptor >= 0 else { return }
        _ = ftruncate(descriptor, 0)
        close(descriptor)
        descriptor = -1
    }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int32(text)
    }
}

/// Why a run could not take the store's lock.
package enum SyncLockError: Error, CustomStringConvertible, Equatable {
    case held(path: String, pid: Int32?)
    case cannotOpen(path: String, reason: String)

    package var description: String {
        switch self {
        case .held(let path, let pid):
            let holder = pid.map { "process \($0)" } ?? "another process"
            return "another hp-sync run (\(holder)) holds the store's lock \(path); nothing was done. "
                + "Try again when it has finished (overlapping cron runs are skipped, not queued)"
        case .cannotOpen(let path, let reason):
            return "cannot open the lock file \(path): \(reason); check the store directory's permissions"
        }
    }
}
