import Foundation
import HPSyncModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A sealed photo (or pack) arriving at a blind store: written to `.tmp-*` in its kind's folder;
/// `finish()` hands it to the image flusher (its fsync runs while the next one arrives), and
/// `commit()`, before the BlindPut or head that may name it, waits for that fsync and renames it
/// to `<ID>`. The session fsyncs each folder once for all it commits, before the put commits, so
/// a row never names a photo a power cut could take back. The store cannot check the bytes (it
/// has no key); it checks the count, and trusted nodes check the seal.
package final class SealedPhotoUpload {
    package let kind: SealedStreamKind
    private let final: URL
    private let temporary: URL
    private let size: Int64
    private var fd: Int32
    private var received: Int64 = 0
    private var durability: Durability?
    private var committed = false

    package init(store: Store, id: BlindID, size: Int64, kind: SealedStreamKind = .photo) throws {
        self.kind = kind
        let folder = store.sealedDirectory(kind)
        try StorePrivacy.makeDirectory(folder)
        final = store.sealedURL(id, kind)
        temporary = folder.appendingPathComponent(".tmp-\(UUID().uuidString)")
        self.size = size
        fd = try FileIO.create(temporary.path)
    }

    deinit { abandon() }

    /// Appends `bytes`; more than the announced size is refused.
    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard received + Int64(bytes.count) <= size else { throw StoreError.stagingOverflow(expected: size) }
        try FileIO.writeAll(fd, bytes, path: temporary.path)
        received += Int64(bytes.count)
    }

    /// All bytes are in: the fsync starts in the background.
    package func finish() throws {
        guard received == size else {
            throw StoreError.invalidBlindEntry("sealed \(kind.noun) ended after \(received) of \(size) bytes")
        }
        durability = ImageFlusher.shared.submit(fd, path: temporary.path)
        fd = -1
    }

    /// Waits for the fsync and renames the photo into place (the caller fsyncs the folder).
    package func commit() throws {
        guard let durability, !committed else { return }
        try durability.wait()
        try FileIO.renameFile(temporary.path, final.path)
        committed = true
    }

    /// Drops what arrived (a failed or cut transfer).
    package func abandon() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if !committed {
            try? durability?.wait()
            _ = FileIO.unlinkIfPresent(temporary.path)
        }
    }
}

/// A stored sealed photo (or pack), read in chunks to send.
package final class SealedPhotoReader {
    private let fd: Int32
    private let path: String
    package let size: Int64

    /// Nil when the store has no such photo (or pack).
    package init?(store: Store, id: BlindID, kind: SealedStreamKind = .photo) {
        path = store.sealedURL(id, kind).path
        guard let descriptor = try? FileIO.openForReading(path) else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(descriptor)
            return nil
        }
        fd = descriptor
        size = Int64(info.st_size)
    }

    deinit { close(fd) }

    /// Reads up to `buffer.count` bytes; 0 at the end.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try FileIO.readChunk(fd, into: buffer, path: path)
    }
}
