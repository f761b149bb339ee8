import Foundation
import HPSyncCrypto
import HPSyncModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few POSIX file operations the store needs with exact durability semantics
/// (`O_EXCL`, `fsync`, directory `fsync`, atomic `rename`), which Foundation does not expose.
enum FileIO {
    static func errorText() -> String { String(cString: strerror(errno)) }

    /// Creates `path` exclusively for writing (mode 0600: the store is private) and returns its
    /// descriptor.
    static func create(_ path: String) throws -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.fileSystem(path: path, errno: errno) }
        return fd
    }

    static func openForReading(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw StoreError.missingImageFile(path: path) }
            throw StoreError.fileSystem(path: path, errno: errno)
        }
        return fd
    }

    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw StoreError.fileSystem(path: path, errno: errno)
            }
            offset += written
        }
    }

    /// Reads up to `buffer.count` bytes; 0 at end of file.
    static func readChunk(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        while true {
            let count = read(fd, buffer.baseAddress!, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw StoreError.fileSystem(path: path, errno: errno)
            }
            return count
        }
    }

    static func sync(_ fd: Int32, path: String) throws {
        guard fsync(fd) == 0 else { throw StoreError.fileSystem(path: path, errno: errno, doing: "fsync") }
    }

    /// Makes a rename or unlink in `directory` durable.
    static func syncDirectory(_ directory: String) throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError.fileSystem(path: directory, errno: errno) }
        defer { close(fd) }
        try sync(fd, path: directory)
    }

    static func renameFile(_ from: String, _ to: String) throws {
        guard rename(from, to) == 0 else {
            throw StoreError.fileSystem(path: to, errno: errno, doing: "rename from \(from)")
        }
    }

    static func linkFile(_ from: String, _ to: String) throws {
        guard link(from, to) == 0 else {
            throw StoreError.fileSystem(path: to, errno: errno, doing: "link from \(from)")
        }
    }

    /// Removes `path`; true when a file was removed, false when there was none.
    @discardableResult
    static func unlinkIfPresent(_ path: String) -> Bool {
        unlink(path) == 0
    }

    /// When a `stat` says the file was last modified, in seconds since 1970.
    static func modified(_ info: stat) -> Double {
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// When `path` was last modified; nil when it cannot be read. One `stat`: Foundation's
    /// `attributesOfItem` also looks up the owner's user and group names (two reads of
    /// `/etc/passwd` and `/etc/group` on every store open).
    static func modificationDate(_ path: String) -> Date? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Date(timeIntervalSince1970: modified(info))
    }

    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The first `count` bytes of a file (fewer if it is shorter).
    static func header(_ path: String, count: Int) throws -> [UInt8] {
        let fd = try openForReading(path)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = try bytes.withUnsafeMutableBytes { try readChunk(fd, into: $0, path: path) }
        return Array(bytes.prefix(read))
    }

    /// Size and SHA-256 of a file, read in chunks.
    static func measure(_ path: String) throws -> ImageRef {
        let fd = try openForReading(path)
        defer { close(fd) }
        var hasher = SHA256()
        var size: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try readChunk(fd, into: buffer, path: path)
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            size += Int64(count)
        }
        return ImageRef(digest: hasher.finalize(), size: size)
    }
}
