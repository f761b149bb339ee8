import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// Reads one sealed photo a blind store was asked for (`BlindRemote.askPhoto`) and opens it,
/// checking every chunk's seal, the photo's length and its SHA-256 before it is handed on: into
/// memory when `budget` has room for it, else into a temporary file in the store's `images/`
/// (private, swept if left behind).
struct BlindPhotoFetch {
    let store: Store
    let remote: BlindRemote
    let keys: BlindKeys
    let photo: BlindPhotoRef
    let image: ImageRef
    let budget: OpenedPhoto.Budget

    func receive() throws -> OpenedPhoto {
        guard let reserved = budget.reserve(image.size) else { return try receiveIntoFile() }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(image.size))
        try open { plain in bytes.append(contentsOf: plain) }
        return OpenedPhoto(bytes: bytes, reserved: reserved)
    }

    private func receiveIntoFile() throws -> OpenedPhoto {
        let url = store.directory.appendingPathComponent("images", isDirectory: true)
            .appendingPathComponent(".tmp-blind-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else { throw StoreError.io(path: url.path, reason: "cannot create a temporary file") }
        let opened = OpenedPhoto(file: url)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try open { plain in try handle.write(contentsOf: plain) }
        return opened
    }

    /// Streams the opened bytes to `write`; throws unless every seal, the length and the
    /// SHA-256 check out (the bytes written so far must then be dropped).
    private func open(into write: ([UInt8]) throws -> Void) throws {
        var opener = keys.photoOpener(photoID: photo.id.bytes, plainSize: image.size)
        var hasher = SHA256()
        let found = try remote.photo(photo.id, expectedSize: photo.size) { sealed in
            let plain = try sealed.withUnsafeBytes { try opener.update($0) }
            hasher.update(plain)
            try write(plain)
        }
        guard found else { throw BlindRecordSeal.Failure("the blind peer does not hold it (or not at its size)") }
        try opener.finish()
        guard hasher.finalize() == image.digest else {
            throw BlindRecordSeal.Failure("it opened to bytes whose SHA-256 is not the record's")
        }
    }
}

/// A photo opened from a blind store and checked, waiting to be streamed to the local sink:
/// its bytes in memory, or a temporary file that goes with it.
final class OpenedPhoto {
    enum Storage {
        case bytes([UInt8])
        case file(URL)
    }

    let storage: Storage
    private let reserved: Budget.Reservation?

    init(bytes: [UInt8], reserved: Budget.Reservation) {
        storage = .bytes(bytes)
        self.reserved = reserved
    }

    init(file: URL) {
        storage = .file(file)
        reserved = nil
    }

    deinit {
        if case .file(let url) = storage { try? FileManager.default.removeItem(at: url) }
    }

    /// How many opened bytes the photos read ahead of the sink may hold in memory (a restore
    /// reads a page's photos before the sink takes the first; a file per photo cost more than
    /// the opening itself on a busy ext4). Past it, photos wait in temporary files.
    final class Budget {
        private var left: Int64

        init(bytes: Int64) { left = bytes }

        /// Room for `size` bytes, given back when the reservation goes.
        func reserve(_ size: Int64) -> Reservation? {
            guard size <= left else { return nil }
            left -= size
            return Reservation(budget: self, size: size)
        }

        final class Reservation {
            private let budget: Budget
            private let size: Int64

            fileprivate init(budget: Budget, size: Int64) {
                self.budget = budget
                self.size = size
            }

            deinit { budget.left += size }
        }
    }
}
