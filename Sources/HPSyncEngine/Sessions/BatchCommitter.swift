import Foundation
import HPSyncModel
import HPSyncStore

/// Commits a sink's batches on a thread of its own, one at a time and in the order given, so
/// the session receives and checks the next pages while the previous batch is written and
/// fsynced. At most one batch is in flight: `submit` first waits for the one before.
///
/// The sink keeps the merge rule exact by waiting (`wait()`) before it reads what the batch
/// in flight may change: a key it holds, or image files when the batch may remove some
/// (`SinkStateMachine` knows which batch is in flight and asks for the wait).
final class BatchCommitter: @unchecked Sendable {
    struct Committed {
        var throughSeq: Int64
        var outcome: ApplyOutcome
    }

    private let store: Store
    private let keepReplaced: Bool
    private let queue = DispatchQueue(label: "hp-sync.sink-commit")
    private let condition = NSCondition()
    private var inFlight: PendingBatch.Sealed?
    private var result: Result<Committed, any Error>?

    init(store: Store, keepReplaced: Bool) {
        self.store = store
        self.keepReplaced = keepReplaced
    }

    /// Starts committing `batch` once the batch before it ended; returns that one's result.
    func submit(_ batch: PendingBatch.Sealed) throws -> Committed? {
        let previous = try wait()
        condition.lock()
        inFlight = batch
        condition.unlock()
        queue.async { [store, keepReplaced] in
            let result = Result { () throws -> Committed in
                defer { for image in batch.staged { image.discard() } }
                let outcome = try store.applyRemote(
                    batch.records, checkpoint: batch.checkpoint, reconcile: batch.reconcile,
                    keepReplaced: keepReplaced, observed: batch.newestRemoteStamp,
                    declined: batch.declinedStamps)
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

    /// Called with the lock held; releases it.
    private func take() throws -> Committed? {
        defer { condition.unlock() }
        guard let result else { return nil }
        self.result = nil
        inFlight = nil
        return try result.get()
    }
}
