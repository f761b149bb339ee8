import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The careful file operations behind `NodeIdentity`: exclusive creation, fsync, mode checks.
enum IdentityFiles {
    static func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    /// Creates the folder (and the store above it) with mode 0700, or tightens an existing one.
    static func makePrivateDirectory(_ directory: URL) throws(TLSError) {
        let parent = directory.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        } catch {
            throw .fileSystem(path: parent.path, operation: "creating folder", reason: "\(error)")
        }
        if mkdir(directory.path, 0o700) != 0 {
            let code = errno
            guard code == EEXIST else { throw failure(directory, "creating folder", code) }
            guard chmod(directory.path, 0o700) == 0 else { throw failure(directory, "chmod 700", errno) }
        }
    }

    /// Writes a new file with `mode`, failing if it exists; the data is fsynced before return.
    static func writeExclusive(_ bytes: [UInt8], to url: URL, mode: mode_t) throws(TLSError) {
        let fd = open(url.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST { throw .identityExists(path: url.path) }
            throw failure(url, "creating", code)
        }
        defer { POSIX.closeDescriptor(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                systemWrite(fd, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                let code = errno
                remove(url)
                throw failure(url, "writing", code)
            }
            offset += written
        }
        guard fsync(fd) == 0 else {
            let code = errno
            remove(url)
            throw failure(url, "fsync", code)
        }
    }

    /// fsyncs a folder so the new names in it survive a crash.
    static func syncDirectory(_ directory: URL) throws(TLSError) {
        let fd = open(directory.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(directory, "opening folder", errno) }
        defer { POSIX.closeDescriptor(fd) }
        guard fsync(fd) == 0 else { throw failure(directory, "fsync", errno) }
    }

    /// Reads the private key, refusing a file that group or others may read.
    static func readPrivate(_ url: URL) throws(TLSError) -> [UInt8] {
        try read(url) { info throws(TLSError) in
            if UInt32(info.st_mode) & 0o077 != 0 {
                throw .insecureKeyPermissions(path: url.path, mode: UInt32(info.st_mode))
            }
        }
    }

    /// Reads a whole (small) file; `check` sees its fstat first, so the mode checked is the file read.
    static func read(_ url: URL, check: (stat) throws(TLSError) -> Void = { _ in }) throws(TLSError) -> [UInt8] {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(url, "opening", errno) }
        defer { POSIX.closeDescriptor(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(url, "stat", errno) }
        try check(info)
        guard info.st_size < 1 << 20 else {
            throw .invalidIdentity(path: url.path, reason: "file is \(info.st_size) bytes, too large for a PEM file")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                systemRead(fd, raw.baseAddress! + total, raw.count - total)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(url, "reading", errno)
            }
            if count == 0 { break }
            total += count
        }
        return Array(bytes[..<total])
    }

    static func remove(_ url: URL) {
        unlink(url.path)
    }

    private static func failure(_ url: URL, _ operation: String, _ code: Int32) -> TLSError {
        .fileSystem(path: url.path, operation: operation, reason: POSIX.describe(code))
    }
}

private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}
