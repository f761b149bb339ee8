import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An append-only file written through a buffer (1 MiB for an export) and read back whole in order: the data
/// file of a streamed export, and its side lists (offsets, references) that are copied into it
/// at the end. A side list is unlinked as soon as it is opened, so nothing of it outlives the
/// process.
final class SpoolFile {
    let path: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// Bytes already written to the file.
    private var size = 0
    /// Bytes per write and per read back (a multiple of 8).
    private let chunk: Int

    /// Creates `path` (which must not exist); with `keep` false it is unlinked at once.
    init(path: String, keep: Bool, bufferBytes: Int) throws(HomepwnerError) {
        precondition(bufferBytes > 0 && bufferBytes % 8 == 0, "a buffer holds whole 8-byte entries")
        self.path = path
        chunk = bufferBytes
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw Self.failure(path) }
        if !keep { unlink(path) }
        buffer.reserveCapacity(chunk)
    }

    deinit { close(fd) }

    func append(_ bytes: some Sequence<UInt8>) throws(HomepwnerError) {
        buffer.append(contentsOf: bytes)
        try flushIfFull()
    }

    /// `value` in its `width` lowest bytes, most significant first.
    func append(bigEndian value: UInt64, width: Int) throws(HomepwnerError) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            buffer.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
        try flushIfFull()
    }

    /// Bytes appended so far, buffered ones included.
    var count: Int { size + buffer.count }

    func flush() throws(HomepwnerError) {
        var written = 0
        while written < buffer.count {
            let result = buffer.withUnsafeBytes { bytes in
                pwrite(fd, bytes.baseAddress! + written, bytes.count - written, off_t(size + written))
            }
            guard result > 0 else { throw Self.failure(path) }
            written += result
        }
        size += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with the file's bytes in order, in chunks of a multiple of 8 bytes (all but
    /// the last full).
    func forEachChunk(_ body: (UnsafeRawBufferPointer) throws(HomepwnerError) -> Void) throws(HomepwnerError) {
        try flush()
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 8)
        defer { bytes.deallocate() }
        var offset = 0
        while offset < size {
            var filled = 0
            let wanted = min(chunk, size - offset)
            while filled < wanted {
                let result = pread(fd, bytes.baseAddress! + filled, wanted - filled, off_t(offset + filled))
                guard result > 0 else { throw Self.failure(path) }
                filled += result
            }
            try body(UnsafeRawBufferPointer(rebasing: bytes[0..<filled]))
            offset += filled
        }
    }

    private func flushIfFull() throws(HomepwnerError) {
        if buffer.count >= chunk { try flush() }
    }

    private static func failure(_ path: String) -> HomepwnerError {
        .cannotWrite(path: path, reason: String(cString: strerror(errno)))
    }
}
