import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// A committed image file opened for sending: its size, and its bytes read in chunks through
/// one caller-owned buffer. After a check (`holds`) with an `ImageHold` big enough, the bytes
/// come from the hold, where the check read them: the file is read once, and the bytes sent
/// are the bytes checked even if the file changes in between.
package final class ImageReader {
    package let size: Int64
    private var descriptor: Int32
    private let path: String
    /// The checked bytes, in the caller's hold, and how many of them were read out.
    private var held: UnsafeRawBufferPointer?
    private var heldRead = 0

    init(path: String) throws {
        self.path = path
        descriptor = try FileIO.openForReading(path)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = FileIO.errorText()
            Foundation.close(descriptor)
            throw StoreError.io(path: path, reason: reason)
        }
        size = Int64(info.st_size)
    }

    deinit { close() }

    /// Reads up to `buffer.count` bytes; 0 at the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let held else { return try FileIO.readChunk(descriptor, into: buffer, path: path) }
        let count = Swift.min(buffer.count, held.count - heldRead)
        if count > 0 { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: held[heldRead..<heldRead + count])) }
        heldRead += count
        return count
    }

    /// Reads from the start again (after a check of the bytes, before sending them).
    package func rewind() throws {
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { throw StoreError.io(path: path, reason: FileIO.errorText()) }
    }

    /// Reads the whole file: whether its bytes are `expected`. Into `hold` when it has room
    /// for them, where later reads find them; else the file is rewound for them.
    func holds(_ expected: ImageRef, using hold: ImageHold?) throws -> Bool {
        guard size == expected.size else { return false }
        if let room = hold?.room(for: Int(size)) { return try holds(expected, in: room) }
        var hasher = SHA256()
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try read(into: buffer)
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            total += Int64(count)
        }
        try rewind()
        return ImageRef(digest: hasher.finalize(), size: total) == expected
    }

    private func holds(_ expected: ImageRef, in room: UnsafeMutableRawBufferPointer) throws -> Bool {
        var total = 0
        while total < room.count {
            let count = try FileIO.readChunk(
                descriptor, into: UnsafeMutableRawBufferPointer(rebasing: room[total...]), path: path)
            if count == 0 { return false }  // shorter than it was when opened
            total += count
        }
        var past: UInt8 = 0
        guard try withUnsafeMutableBytes(of: &past, { try FileIO.readChunk(descriptor, into: $0, path: path) }) == 0
        else { return false }  // longer than it was when opened
        var hasher = SHA256()
        hasher.update(UnsafeRawBufferPointer(room))
        guard ImageRef(digest: hasher.finalize(), size: Int64(total)) == expected else { return false }
        held = UnsafeRawBufferPointer(room)
        heldRead = 0
        return true
    }

    /// The file ended before `size` bytes: it was replaced while being read.
    package func shortFileError() -> StoreError {
        .io(path: path, reason: "the image ended early (it changed while being sent); sync again")
    }

    package func close() {
        held = nil
        if descriptor >= 0 {
            Foundation.close(descriptor)
            descriptor = -1
        }
    }
}

extension Store {
    /// Opens a committed image file whose bytes are exactly `digest` (read and hashed first; any
    /// of the files with that digest will do). Files that exist but hold other bytes come back in
    /// `damaged` (with those whose file is gone), remembered for healing; the caller logs them. A source never sends bytes it
    /// knows to be wrong: the sink would end the session over them.
    package func openIntactImage(withDigest digest: SHA256Digest, using hold: ImageHold? = nil) throws -> (
        reader: ImageReader?, damaged: [ItemKey]
    ) {
        let candidates = try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT key, imageSize FROM item WHERE imageDigest = ? AND deleted = 0
                      AND key NOT IN (SELECT key FROM pendingImage) LIMIT 8
                    """, arguments: [Data(digest.bytes)])
        }
        var damaged: [ItemKey] = []
        defer { if !damaged.isEmpty { try? rememberImagesToHeal(damaged) } }
        for row in candidates {
            guard let key = try? ItemKey(row["key"] as String) else { continue }
            let reader: ImageReader
            do {
                reader = try ImageReader(path: images.finalPath(key))
            } catch StoreError.missingImageFile {
                damaged.append(key)
                continue
            }
            if try reader.holds(ImageRef(digest: digest, size: row["imageSize"]), using: hold) {
                return (reader, damaged)
            }
            reader.close()
            damaged.append(key)
        }
        // A photo a tombstone or a clash keeps lives in the trash folder: a peer reviving the
        // item asks for it by digest.
        if let reader = try? ImageReader(path: trashImages.path(digest)) {
            if try reader.holds(ImageRef(digest: digest, size: reader.size), using: hold) { return (reader, damaged) }
            reader.close()
        }
        return (nil, damaged)
    }

    /// Opens the image file of `key` when its bytes are exactly `digest` (read and hashed
    /// first), else nil, without a query: a source asked for the image of a record it sent finds
    /// it under that record's key. A file holding other bytes is not judged damaged here (the
    /// key may have a newer image by now): the caller asks `openIntactImage(withDigest:)`.
    package func openImage(ofKey key: ItemKey, holding digest: SHA256Digest, using hold: ImageHold? = nil) throws
        -> ImageReader?
    {
        let reader: ImageReader
        do {
            reader = try ImageReader(path: images.finalPath(key))
        } catch StoreError.missingImageFile {
            return nil
        }
        if try reader.holds(ImageRef(digest: digest, size: reader.size), using: hold) { return reader }
        reader.close()
        return nil
    }

    /// Opens a committed local image file with `digest` (under any key), or nil if there is none.
    package func openImage(withDigest digest: SHA256Digest) throws -> ImageReader? {
        guard let url = try imageFile(withDigest: digest) else { return nil }
        do {
            return try ImageReader(path: url.path)
        } catch StoreError.missingImageFile {
            return nil  // replaced or deleted since the lookup
        }
    }
}
