import Foundation
import HPSyncCrypto
import HPSyncModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Image bytes written to a temporary in `images/` and verified against the announced digest,
/// ready for `Store.applyRemote` to journal and rename into place once `durability` says the
/// bytes reached the disk (it waits for that before committing).
package struct StagedImage: Sendable, Hashable {
    package let ref: ImageRef
    let tempName: String
    let directory: ImageDirectory
    let durability: Durability

    /// Removes the temporary; use when the image will not be applied.
    package func discard() {
        FileIO.unlinkIfPresent(directory.tempPath(tempName))
    }

    package static func == (lhs: StagedImage, rhs: StagedImage) -> Bool {
        lhs.ref == rhs.ref && lhs.tempName == rhs.tempName
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(ref)
        hasher.combine(tempName)
    }
}

/// Receives one image's bytes as they stream in, hashing and writing them to a temporary.
package final class ImageStaging {
    package let expected: ImageRef
    private let directory: ImageDirectory
    private let tempName: String
    private var fd: Int32
    private var hasher: SHA256?
    private var received: Int64 = 0

    init(expected: ImageRef, temporaries: TemporaryFilePool) throws {
        self.expected = expected
        self.directory = temporaries.directory
        (self.tempName, self.fd) = try temporaries.take()
        self.hasher = SHA256()
    }

    deinit {
        if fd >= 0 {
            close(fd)
            FileIO.unlinkIfPresent(directory.tempPath(tempName))
        }
    }

    /// Appends bytes; throws (and discards the temporary) past the announced size.
    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard fd >= 0 else { throw StoreError.io(path: directory.tempPath(tempName), reason: "staging already closed") }
        received += Int64(bytes.count)
        guard received <= expected.size else {
            abort()
            throw StoreError.stagingOverflow(expected: expected.size)
        }
        hasher!.update(bytes)
        do {
            try FileIO.writeAll(fd, bytes, path: directory.tempPath(tempName))
        } catch {
            abort()
            throw error
        }
    }

    /// Verifies size and SHA-256 and returns the staged image, whose fsync runs in the background
    /// (`ImageFlusher`); on mismatch the temporary is removed and `StoreError.digestMismatch` thrown.
    package func finish() throws -> StagedImage {
        let path = directory.tempPath(tempName)
        guard fd >= 0, let hasher = hasher.take() else {
            throw StoreError.io(path: path, reason: "staging already closed")
        }
        let actual = ImageRef(digest: hasher.finalize(), size: received)
        guard actual == expected else {
            abort()
            throw StoreError.digestMismatch(expected: expected, actual: actual)
        }
        let durability = ImageFlusher.shared.submit(fd, path: path)
        fd = -1
        return StagedImage(ref: actual, tempName: tempName, directory: directory, durability: durability)
    }

    /// Closes and removes the temporary.
    package func abort() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        FileIO.unlinkIfPresent(directory.tempPath(tempName))
    }
}
