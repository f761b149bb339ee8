import HPSyncModel
import HPSyncStore

extension ImageStaging {
    /// Finishes a staged image a peer sent for `key`: bytes that do not match the digest they were
    /// sent under are the peer's fault, so the store's mismatch becomes the session's
    /// `imageDigestMismatch` (ERROR_BAD_DATA to the peer), naming both digests.
    func finish(sentBy key: ItemKey) throws -> StagedImage {
        do {
            return try finish()
        } catch StoreError.digestMismatch(let expected, let actual) {
            throw SyncError.imageDigestMismatch(
                key: key.rawValue,
                detail: "announced \(expected.size) bytes with SHA-256 \(expected.digest), "
                    + "received \(actual.size) bytes with SHA-256 \(actual.digest)")
        }
    }
}
