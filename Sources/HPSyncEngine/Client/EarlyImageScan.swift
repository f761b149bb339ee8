import Foundation
import HPSyncModel
import HPSyncStore

/// A pull's image check (`Store.findMissingImages`: a query and a `stat` per image file, no
/// write) started as soon as the store is open, before the session: the wait for the identity,
/// the TLS context, the connect and the handshake then overlap it. Started at the connect, it
/// outlasted them (2,000 images), and the pull waited for it before its first request.
///
/// The first pull of a run takes it; a later attempt (a retry) checks afresh, since the store
/// may have changed in between. Dropped untaken, it waits for its work (`BackgroundResult`).
public final class EarlyImageScan: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: BackgroundResult<[ItemKey]>?

    /// Starts the check on a thread of its own.
    public convenience init(store: Store) {
        self.init(BackgroundResult { try store.findMissingImages() })
    }

    /// Holds a check started by the caller.
    public init(_ check: BackgroundResult<[ItemKey]>) {
        pending = check
    }

    /// The check, the first time; nil after.
    func take() -> BackgroundResult<[ItemKey]>? {
        lock.withLock {
            defer { pending = nil }
            return pending
        }
    }
}
