import Foundation
import HPSyncCrypto
import HPSyncModel
import HPSyncStore
import Logging

/// One pull or push against one peer as cron runs it: a plan in, a report out.
///
/// It retries what may pass (`RetryPolicy`), pulls under the mass-deletion guard (a preview
/// first when the source announces too many deletions, `SyncRun+GuardedPull.swift`), keeps what
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
                try? store.recordSyncSuccess(peer: peer.name, direction: direction)
            }
            return report
        } catch {
            if records { try? store.recordSyncFailure(peer: peer.name, direction: direction, message: "\(error)") }
            throw error
        }
    }
}
