import Foundation
import HPSyncModel
import HPSyncStore

/// Commits a sink's batches on a thread of its own, one at a time and in the order given, so
/// the session receives and checks the next pages while the previous batch is written and
/// fsynced. At most one batch is in flight: `submit` first waits for the one before.
///
/// The session keeps the merge rule exact by waiting (`wait()`) before it reads what the batch
/// in flight may change: a key it holds (`holdsAny(_:)`), or image files when the batch may remove
/// some (`mayRemoveImages`).
final class BatchCommitter: @unchecked Sendable {
    /// One transaction's worth of a session: records, the checkpoint of its last page and the
    /// reconciliation step, if any.
    struct Batch {
        var records: [IncomingRecord]
        var checkpoint: CheckpointUpdate?
        var reconcile: ReconcileStep?
        var throughSeq: Int64
        var keys: Set<ItemKey>
        /// Whether applying may unlink or replace image files already in place (an existing key
        /// changes, or a reconciliation deletes): a later page must not copy from those meanwhile.
        var mayRemoveImages: Bool
        /// Temporaries to remove once the batch is committed (or failed).
        var staged: [StagedImage]
    }

    struct Committed {
        var throughSeq: Int64
        var outcome: ApplyOutcome
    }

    private let store: Store
    private let keepReplaced: Bool?
    private let queue = DispatchQueue(label: "hp-sync.sink-commit")
    private let condition = NSCondition()
    private var inFlight: Batch?
    private var result: Result<Committed, any Error>?

    init(store: Store, keepReplaced: Bool?) {
        self.store = store
        self.keepReplaced = keepReplaced
    }

    /// Starts committing `batch` once the batch before it ended; returns that one's result.
    func submit(_ batch: Batch) throws -> Committed? {
        let previous = try wait()
        condition.lock()
        inFlight = batch
        condition.unlock()
        queue.async { [store, keepReplaced] in
            let result = Result { () throws -> Committed in
                defer { for image in batch.staged { image.discard() } }
                let outcome = try store.applyRemote(
                    batch.records, checkpoint: batch.checkpoint, reconcile: batch.reconcile,
                    keepReplaced: keepReplaced ?? false)
                return Committed(throughSeq: batch.throughSeq, outcome: outcome)
            }
            self.condition.lock()
            self.result = result
            self.condition.broadcast()
            self.condition.unlock()
        }
        return previous
    }

    /// Waits for the batch in flight; returns its result (nil when none was in flight).
    func wait() throws -> Committed? {
        condition.lock()
        while inFlight != nil && result == nil { condition.wait() }
        return try take()
    }

    /// The result of the batch in flight if it has ended, without waiting.
    func poll() throws -> Committed? {
        condition.lock()
        return try take()
    }

    /// Whether the batch in flight writes any of `keys`.
    func holdsAny(_ keys: some Sequence<ItemKey>) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let held = inFlight?.keys else { return false }
        return keys.contains(where: held.contains)
    }

    var mayRemoveImages: Bool {
        condition.lock()
        defer { condition.unlock() }
        return inFlight?.mayRemoveImages ?? false
    }

    /// Called with the lock held; releases it.
    private func take() throws -> Committed? {
        defer { condition.unlock() }
        guard let result else { return nil }
        self.result = nil
        inFlight = nil
        return try result.get()
    }
}
