import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncProtocol
import HPSyncStore

/// Reads one sealed photo a blind store was asked for (`BlindRemote.askPhoto`) and opens it
/// into a temporary file in the store's `images/` (private, swept if left behind), checking
/// every chunk's seal, the photo's length and its SHA-256 before the file is handed on.
struct BlindPhotoFetch {
    let store: Store
    let remote: BlindRemote
    let keys: BlindKeys
    let photo: BlindPhotoRef
    let image: ImageRef

    func receive() throws -> URL {
        let url = store.directory.appendingPathComponent("images", isDirectory: true)
            .appendingPathComponent(".tmp-blind-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else { throw StoreError.io(path: url.path, reason: "cannot create a temporary file") }
        do {
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            var opener = keys.photoOpener(photoID: photo.id.bytes, plainSize: image.size)
            var hasher = SHA256()
            let found = try remote.photo(photo.id, expectedSize: photo.size) { sealed in
                let plain = try sealed.withUnsafeBytes { try opener.update($0) }
                hasher.update(plain)
                try handle.write(contentsOf: plain)
            }
            guard found else { throw BlindRecordSeal.Failure("the blind peer does not hold it (or not at its size)") }
            try opener.finish()
            let digest = hasher.finalize()
            guard digest == image.digest else {
                throw BlindRecordSeal.Failure("it opened to bytes whose SHA-256 is not the record's")
            }
            return url
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
    }
}
