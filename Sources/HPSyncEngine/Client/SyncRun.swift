import Dispatch
import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import Logging

/// One pull or push against one peer as cron runs it: a plan in, a report out.
///
/// It retries what may pass (`RetryPolicy`), pulls under the mass-deletion guard (a preview
/// first when the source announces too many deletions, `guardedPull` below), keeps what
/// a pull deletes or overwrites in the trash and purges trash past its retention, and records the
/// outcome for `status`. The caller holds the store's lock (`SyncLock`) for the whole run.
public struct SyncRun {
    /// The peer as resolved: its name and the node ID its certificate must have.
    public struct Peer: Sendable, Equatable {
        public var name: String
        public var nodeID: NodeID

        public init(name: String, nodeID: NodeID) {
            self.name = name
            self.nodeID = nodeID
        }
    }

    let store: Store
    let peer: Peer
    /// Opens a new session to the peer (one per attempt, and two for a guarded pull's preview).
    let connect: () throws -> any MessageChannel
    let plan: SyncPlan
    let logger: Logger

    public init(
        store: Store, peer: Peer, connect: @escaping () throws -> any MessageChannel, plan: SyncPlan = .init(),
        logger: Logger
    ) {
        self.store = store
        self.peer = peer
        self.connect = connect
        self.plan = plan
        self.logger = logger
    }

    /// Pulls the peer's changes.
    public func pull() throws -> SyncReport {
        let report = try recorded(.pull) {
            try plan.retryPolicy.run(logger: logger) { _ in try guardedPull() }
        }
        if plan.keepsReplaced {
            do {
                try store.purgeTrash(olderThanMilliseconds: plan.keepDeletedMilliseconds)
            } catch {
                logger.warning("could not purge the trash", metadata: ["error": "\(error)"])
            }
        }
        return report
    }

    /// Pushes local changes the peer has not confirmed yet.
    public func push() throws -> SyncReport {
        try recorded(.push) {
            try plan.retryPolicy.run(logger: logger) { _ in
                try client.push(over: connect(), serverNodeID: peer.nodeID, peerName: peer.name, plan: plan)
            }
        }
    }

    var client: SyncClient { SyncClient(store: store, logger: logger) }

    /// Runs one direction and writes its outcome to the store (not for dry runs).
    private func recorded(_ direction: SyncDirection, _ body: () throws -> SyncReport) throws -> SyncReport {
        let records = plan.recordsOutcomeInStore
        do {
            let report = try body()
            if records {
                logger.info(
                    "\(direction.rawValue) done",
                    metadata: [
                        "inserted": "\(report.inserted.count)", "updated": "\(report.updated.count)",
                        "deleted": "\(report.deleted.count)", "refused": "\(report.refused.count)",
                    ])
                try? store.recordSyncSuccess(
                    peer: peer.name, direction: direction, peerClock: report.clockSkew?.peerMilliseconds)
            }
            return report
        } catch {
            if records { try? store.recordSyncFailure(peer: peer.name, direction: direction, message: "\(error)") }
            throw error
        }
    }
}

extension SyncRun {
    /// Pulls under the mass-deletion guard.
    ///
    /// The verdict rests on the deletions that really arrive: the session that applies counts
    /// them as pages come and stops before the page that would trip the guard, committing only
    /// what came before it (within the limit). What a version-2 server announces on its first
    /// page is a hint that saves work: when even all the tombstones it announces could not trip
    /// the guard, that one session applies (the usual hourly pull); otherwise the session
    /// becomes a preview (manifest only, no records or images) that counts the real deletions,
    /// so that a pull the guard refuses then applies nothing at all, and a second session
    /// applies if the guard allows them (still counting). There is no preview when nothing here
    /// could be deleted (an empty store: the first, large backup pays nothing), and no second
    /// session when the preview's manifest was empty.
    func guardedPull() throws -> SyncReport {
        let client = client
        // The first session's decision only needs to know "at least this many" live items.
        if let massDeleteGuard = plan.massDeleteGuard, !plan.dryRun, try store.liveItemCount(upTo: 1) > 0 {
            var report = try client.pull(
                connecting: connect, serverNodeID: peer.nodeID, peerName: peer.name, plan: plan, asksFirst: true)
            if !report.dryRun { return report }
            let live = try store.liveItemCount()
            try massDeleteGuard.check(deleting: report.deleted.count, liveItems: live, peer: peer.name)
            // (A reconciliation can delete here even when the listing is empty.)
            if report.manifestEntries == 0 && report.reconciled.isEmpty {
                report.dryRun = false
                return report
            }
        }
        return try client.pull(connecting: connect, serverNodeID: peer.nodeID, peerName: peer.name, plan: plan)
    }
}

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

/// A throwing computation started on a thread of its own at once, its result waited for later:
/// work that overlaps with what the caller does meanwhile (a pull's image check with the TCP
/// connect, the TLS handshake and the Hellos; the TLS identity with the store's opening).
///
/// The work never outlives its owner: dropping the value waits for it, also when the owner
/// leaves without asking (it failed first). The process may exit next, and its exit handlers
/// (OpenSSL's, SQLite's callers') must not run under work still in flight.
public final class BackgroundResult<Value: Sendable>: @unchecked Sendable {
    /// Written once by the work inside `done`; read only after waiting for it. Apart from this
    /// value, so that the work holds the outcome, not its owner.
    private final class Outcome: @unchecked Sendable {
        var result: Result<Value, any Error>?
    }

    private let done = DispatchGroup()
    private let outcome = Outcome()

    public init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global(qos: .userInitiated).async(group: done) { [outcome] in
            outcome.result = Result { try work() }
        }
    }

    deinit {
        done.wait()
    }

    /// The work's value or error, once it has ended.
    public func wait() throws -> Value {
        done.wait()
        guard let result = outcome.result else { preconditionFailure("the work ended without a result") }
        return try result.get()
    }
}
