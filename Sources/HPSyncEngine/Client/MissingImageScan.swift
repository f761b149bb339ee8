import Dispatch
import HPSyncModel
import HPSyncStore

/// A pull's image check (`Store.findMissingImages`: a query and a `stat` per image file, no
/// write) run on a thread of its own, started before the connection is made: the TCP connect,
/// the TLS handshake and the Hellos then overlap it instead of waiting behind it.
final class MissingImageScan: @unchecked Sendable {
    private let done = DispatchGroup()
    /// Written once by the scan inside `done`; read only after waiting for it.
    private var result: Result<[ItemKey], any Error> = .success([])

    init(store: Store) {
        DispatchQueue.global(qos: .userInitiated).async(group: done) {
            self.result = Result { try store.findMissingImages() }
        }
    }

    /// The keys whose image file is missing or of the wrong size, once the scan has ended.
    func wait() throws -> [ItemKey] {
        done.wait()
        return try result.get()
    }
}
